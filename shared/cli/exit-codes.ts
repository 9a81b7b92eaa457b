/**
 * The exit codes of `d8v`, for scripts (README.md lists them). Errors are classified by class and
 * HTTP status, never by message text.
 */
import { AppError, ConfigError, KubeApiError, NotFoundError, ProtocolError, TimeoutError, UnavailableError } from '../errors/index.js';
import { ListenError } from '../http/listen.js';

export const ExitCode = {
  /** Done: the operation completed, the session ended normally. */
  ok: 0,
  /** The request was accepted but the operation failed, was refused by the server, or was superseded. */
  failed: 1,
  /** Bad arguments, a kubeconfig/context that cannot be used, or a local address that cannot be bound. */
  usage: 2,
  /** The VirtualMachine (or namespace) does not exist. */
  notFound: 3,
  /** Not authenticated (401) or not allowed (403). */
  forbidden: 4,
  /** The cluster or the VM's backend could not be reached or answered 5xx. */
  unavailable: 5,
  /** `--timeout` passed before the operation finished (it may still be running). */
  timeout: 6,
  /** Interrupted (Ctrl-C / SIGINT / SIGTERM), as a shell reports it. */
  interrupted: 130,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** A wrong argument or option; the message names it. */
export class UsageError extends AppError {
  readonly code = 'CLI_USAGE';
  readonly status = 400;
}

/** An operation that ran and ended badly (VMOP Failed or Superseded, a session closed with an error). */
export class OperationFailedError extends AppError {
  readonly code = 'CLI_OPERATION_FAILED';
  readonly status = 500;
}

/** The user interrupted a command (Ctrl-C) before it finished. */
export class InterruptedError extends AppError {
  readonly code = 'CLI_INTERRUPTED';
  readonly status = 499;
}

/** The exit code for anything a command threw. */
export function exitCodeOf(err: unknown): ExitCode {
  if (err instanceof InterruptedError) return ExitCode.interrupted;
  if (err instanceof UsageError || err instanceof ConfigError || err instanceof ListenError) return ExitCode.usage;
  if (err instanceof NotFoundError) return ExitCode.notFound;
  if (err instanceof TimeoutError) return ExitCode.timeout;
  if (err instanceof UnavailableError || err instanceof ProtocolError) return ExitCode.unavailable;
  if (err instanceof KubeApiError && (err.status === 401 || err.status === 403)) return ExitCode.forbidden;
  return ExitCode.failed;
}
