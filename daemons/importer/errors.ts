/**
 * Why an import failed, as a stable reason the controller copies into the resource's condition, and a
 * message a person understands. Every failure of the pipeline is an ImportError; a server (upload
 * endpoint, metrics) that cannot bind its address is InternalError with the ListenError's message
 * (which server, the address, the cause); anything else thrown is reported as InternalError.
 */
import { ListenError } from '../../shared/http/listen.js';
import { AppError, errorMessage } from '../../shared/errors/index.js';

export const FAILURE_REASONS = [
  'InvalidConfiguration',
  'SourceUnreachable',
  'SourceNotFound',
  'SourceHTTPError',
  'SourceTooLarge',
  'ChecksumMismatch',
  'NotADiskImage',
  'CorruptImage',
  'UnsupportedImage',
  'DestinationError',
  'UploadTimeout',
  'Interrupted',
  'InternalError',
] as const;
export type FailureReason = (typeof FAILURE_REASONS)[number];

export class ImportError extends AppError {
  readonly code = 'IMPORT_FAILED';
  readonly status = 422;
  readonly reason: FailureReason;

  constructor(reason: FailureReason, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.reason = reason;
  }
}

/** The reason and message to report for anything thrown. */
export function failureOf(err: unknown): { reason: FailureReason; message: string } {
  if (err instanceof ImportError) return { reason: err.reason, message: err.message };
  if (err instanceof ListenError) return { reason: 'InternalError', message: err.message };
  const message = errorMessage(err);
  return { reason: 'InternalError', message: `internal error: ${message}` };
}
