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

/** An optimistic-concurrency conflict (HTTP 409 from the apiserver): retry with fresh state. */
export class ConflictError extends AppError {
  readonly code = 'CONFLICT';
  readonly status = 409;
}

/** A dependency (apiserver, registry, peer) could not be reached or answered 5xx. */
export class UnavailableError extends AppError {
  readonly code = 'UNAVAILABLE';
  readonly status = 503;
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

  constructor(message: string, status: number, reason?: string, options?: { cause?: unknown }) {
    super(message, options);
    this.status = status;
    this.reason = reason;
  }
}

/** The message of anything thrown, without assuming it is an Error. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (typeof err === 'string') return err;
  return String(err);
}

/** The HTTP status to answer with for anything thrown: AppErrors carry theirs, the rest are 500. */
export function httpStatusOf(err: unknown): number {
  return err instanceof AppError ? err.status : 500;
}
