/**
 * Error classes with a stable machine-readable code, an HTTP status and a cause. Classify errors by
 * class (`instanceof`) or by `code`, never by message text.
 */
export abstract class AppError extends Error {
  abstract readonly code: string;
  abstract readonly status: number;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }

  /** A JSON-safe description (never `JSON.stringify` an Error directly). */
  toJSON(): { code: string; message: string; status: number } {
    return { code: this.code, message: this.message, status: this.status };
  }
}

/** One problem with an input, located by a dotted/bracketed path such as `spec.cpu.cores`. */
export interface FieldProblem {
  path: string;
  message: string;
}

/** The input is malformed or violates a rule; lists every problem found, not only the first. */
export class ValidationError extends AppError {
  readonly code: string = 'VALIDATION_FAILED';
  readonly status = 400;
  readonly problems: readonly FieldProblem[];

  constructor(what: string, problems: readonly FieldProblem[], options?: { cause?: unknown }) {
    super(`${what}: ${problems.map((p) => (p.path ? `${p.path}: ${p.message}` : p.message)).join('; ')}`, options);
    this.problems = problems;
  }
}

/** Configuration is invalid; the process should exit non-zero after reporting it. */
export class ConfigError extends ValidationError {
  override readonly code: string = 'CONFIG_INVALID';
}

export class BadRequestError extends AppError {
  readonly code = 'BAD_REQUEST';
  readonly status = 400;
}

export class PayloadTooLargeError extends AppError {
  readonly code = 'PAYLOAD_TOO_LARGE';
  readonly status = 413;
}

export class NotFoundError extends AppError {
  readonly code = 'NOT_FOUND';
  readonly status = 404;
}

/**
 * HTTP 409 from the apiserver: someone else wrote first; retry with fresh state. `reason` keeps the
 * apiserver's reason (`Conflict` for a stale resourceVersion or an apply conflict). A create that
 * found the name taken is the subclass AlreadyExistsError, so `instanceof ConflictError` catches
 * every 409 and `instanceof AlreadyExistsError` tells the two apart.
 */
export class ConflictError extends AppError {
  readonly code: string = 'CONFLICT';
  readonly status = 409;
  readonly reason: string;

  constructor(message: string, options?: { cause?: unknown; reason?: string | undefined }) {
    super(message, options);
    this.reason = options?.reason ?? 'Conflict';
  }
}

/** HTTP 409 with reason AlreadyExists: a create whose name is taken (the object may be ours already). */
export class AlreadyExistsError extends ConflictError {
  override readonly code: string = 'ALREADY_EXISTS';

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, { ...options, reason: 'AlreadyExists' });
  }
}

/** What an upstream said about its failure, kept for retries and logs. */
export interface UpstreamDetails {
  cause?: unknown;
  /** The HTTP status the dependency answered (undefined when it did not answer at all). */
  upstreamStatus?: number | undefined;
  /** Its machine-readable reason (a metav1.Status reason such as `InternalError`, `ServiceUnavailable`). */
  reason?: string | undefined;
  /** How long it asked us to wait before retrying (Retry-After), in milliseconds. */
  retryAfterMs?: number | undefined;
}

/**
 * A dependency (apiserver, registry, peer) could not be reached or answered 5xx. Retrying later may
 * succeed; `upstreamStatus`, `reason` and `retryAfterMs` say what it answered, if it answered.
 */
export class UnavailableError extends AppError {
  readonly code = 'UNAVAILABLE';
  readonly status = 503;
  readonly upstreamStatus: number | undefined;
  readonly reason: string | undefined;
  readonly retryAfterMs: number | undefined;

  constructor(message: string, options?: UpstreamDetails) {
    super(message, options);
    this.upstreamStatus = options?.upstreamStatus;
    this.reason = options?.reason;
    this.retryAfterMs = options?.retryAfterMs;
  }
}

/**
 * A dependency answered something that breaks the protocol (a response or watch line that is not
 * JSON, a watch event of no known type): its fault, not the caller's, so 502 rather than 400.
 */
export class ProtocolError extends AppError {
  readonly code = 'PROTOCOL';
  readonly status = 502;
}

export class TimeoutError extends AppError {
  readonly code = 'TIMEOUT';
  readonly status = 504;
}

/** A Kubernetes API call failed with a status the caller did not expect. */
export class KubeApiError extends AppError {
  readonly code = 'KUBE_API';
  readonly status: number;
  readonly reason: string | undefined;
  /** Retry-After of the answer (429 TooManyRequests carries one), in milliseconds. */
  readonly retryAfterMs: number | undefined;

  /** The apiserver's own message (without what was attempted), when it sent one. */
  readonly serverMessage: string | undefined;

  constructor(
    message: string,
    status: number,
    reason?: string,
    options?: { cause?: unknown; retryAfterMs?: number | undefined; serverMessage?: string | undefined },
  ) {
    super(message, options);
    this.status = status;
    this.reason = reason;
    this.retryAfterMs = options?.retryAfterMs;
    this.serverMessage = options?.serverMessage;
  }
}

/** How long a failure asked the caller to wait before retrying (Retry-After), if it said. */
export function retryAfterMsOf(err: unknown): number | undefined {
  return err instanceof KubeApiError || err instanceof UnavailableError ? err.retryAfterMs : undefined;
}

/** The message of anything thrown, without assuming it is an Error. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (typeof err === 'string') return err;
  // An Error of another realm (node's fs errors under jest's vm modules) fails instanceof.
  if (typeof err === 'object' && err !== null && typeof (err as { message?: unknown }).message === 'string') return (err as Error).message;
  return String(err);
}

/** The HTTP status to answer with for anything thrown: AppErrors carry theirs, the rest are 500. */
export function httpStatusOf(err: unknown): number {
  return err instanceof AppError ? err.status : 500;
}
