import {
  AppError,
  ConflictError,
  KubeApiError,
  NotFoundError,
  TimeoutError,
  UnavailableError,
  type FieldProblem,
} from '../errors/index.js';

/** The parts of a metav1.Status body that classification and messages use. */
export interface StatusBody {
  status: number;
  reason: string | undefined;
  message: string | undefined;
}

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
 * the body only adds the reason and message (a proxy in front may answer with HTML or nothing).
 */
export function statusFromBody(httpStatus: number, body: unknown): StatusBody {
  const parsed = typeof body === 'string' ? tryParseJson(body) : body;
  if (parsed === null || typeof parsed !== 'object') {
    return { status: httpStatus, reason: undefined, message: typeof body === 'string' && body ? body : undefined };
  }
  const record = parsed as Record<string, unknown>;
  return {
    status: httpStatus,
    reason: typeof record['reason'] === 'string' ? record['reason'] : undefined,
    message: typeof record['message'] === 'string' ? record['message'] : undefined,
  };
}

/**
 * Map an apiserver failure to an error class by status code (never by message text):
 * 404 NotFoundError, 409 ConflictError, anything else KubeApiError carrying status and reason.
 * `what` says what was attempted, e.g. `get Widget ns/a`.
 */
export function apiError(what: string, status: StatusBody): AppError {
  const text = `${what}: ${status.message ?? status.reason ?? `HTTP ${status.status}`}`;
  if (status.status === 404) return new NotFoundError(text);
  if (status.status === 409) return new ConflictError(text);
  return new KubeApiError(text, status.status, status.reason);
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
