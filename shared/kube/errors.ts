import {
  AlreadyExistsError,
  AppError,
  ConflictError,
  KubeApiError,
  NotFoundError,
  TimeoutError,
  UnavailableError,
  type FieldProblem,
} from '../errors/index.js';

/** The parts of a metav1.Status body (and the Retry-After header) that classification and messages use. */
export interface StatusBody {
  status: number;
  reason: string | undefined;
  message: string | undefined;
  /** From the Retry-After header (seconds), else the Status's `details.retryAfterSeconds`. */
  retryAfterMs?: number | undefined;
}

/** The longest Retry-After honoured (a larger one is taken as this). */
const MAX_RETRY_AFTER_MS = 10 * 60_000;

/** An object read from the apiserver does not match its zod schema. Names the object and every field. */
export class InvalidObjectError extends AppError {
  readonly code = 'KUBE_OBJECT_INVALID';
  readonly status = 502;
  readonly problems: readonly FieldProblem[];

  constructor(object: string, problems: readonly FieldProblem[]) {
    const detail = problems.map((p) => (p.path ? `${p.path}: ${p.message}` : p.message)).join('; ');
    super(`${object} does not match its schema: ${detail}`);
    this.problems = problems;
  }
}

/**
 * Decode a response body as a metav1.Status as far as it goes. The HTTP status code is authoritative;
 * the body only adds the reason, the message and `details.retryAfterSeconds` (a proxy in front may
 * answer with HTML or nothing). `retryAfter` is the Retry-After header, when there was one.
 */
export function statusFromBody(httpStatus: number, body: unknown, retryAfter?: string): StatusBody {
  const parsed = typeof body === 'string' ? tryParseJson(body) : body;
  const header = retryAfterHeaderMs(retryAfter);
  if (parsed === null || typeof parsed !== 'object') {
    return { status: httpStatus, reason: undefined, message: typeof body === 'string' && body ? body : undefined, retryAfterMs: header };
  }
  const record = parsed as Record<string, unknown>;
  const details = record['details'] as { retryAfterSeconds?: unknown } | null | undefined;
  const seconds = typeof details === 'object' && details !== null ? details.retryAfterSeconds : undefined;
  return {
    status: httpStatus,
    reason: typeof record['reason'] === 'string' ? record['reason'] : undefined,
    message: typeof record['message'] === 'string' ? record['message'] : undefined,
    retryAfterMs: header ?? (typeof seconds === 'number' && seconds > 0 ? Math.min(seconds * 1000, MAX_RETRY_AFTER_MS) : undefined),
  };
}

/** A Retry-After header in delay-seconds (the apiserver's form) as milliseconds; undefined otherwise. */
function retryAfterHeaderMs(value: string | undefined): number | undefined {
  if (value === undefined || !/^\s*\d+\s*$/.test(value)) return undefined;
  return Math.min(Number(value) * 1000, MAX_RETRY_AFTER_MS);
}

/**
 * Map an apiserver failure to an error class by status code and reason (never by message text):
 * 404 NotFoundError; 409 AlreadyExistsError (reason AlreadyExists) or ConflictError (reason kept);
 * 5xx UnavailableError (the server's status and reason kept: retry later); anything else
 * KubeApiError carrying status and reason. Retry-After is kept on all of them.
 * `what` says what was attempted, e.g. `get Widget ns/a`.
 */
export function apiError(what: string, status: StatusBody): AppError {
  const text = `${what}: ${status.message ?? status.reason ?? `HTTP ${status.status}`}`;
  const retryAfterMs = status.retryAfterMs;
  if (status.status === 404) return new NotFoundError(text);
  if (status.status === 409) {
    return status.reason === 'AlreadyExists' ? new AlreadyExistsError(text) : new ConflictError(text, { reason: status.reason });
  }
  if (status.status >= 500) return new UnavailableError(text, { upstreamStatus: status.status, reason: status.reason, retryAfterMs });
  return new KubeApiError(text, status.status, status.reason, { retryAfterMs, serverMessage: status.message });
}

/** Map a transport failure (no HTTP answer) to UnavailableError, or TimeoutError for a deadline. */
export function transportError(what: string, err: unknown, timedOut: boolean): AppError {
  if (err instanceof AppError) return err;
  const reason = err instanceof Error ? err.message : String(err);
  if (timedOut) return new TimeoutError(`${what}: timed out`, { cause: err });
  return new UnavailableError(`${what}: ${reason}`, { cause: err });
}

/** True for the status a watch or list answers when the resourceVersion is too old (410 Gone). */
export function isGone(err: unknown): boolean {
  return err instanceof KubeApiError && err.status === 410;
}

function tryParseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
