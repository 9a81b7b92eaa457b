import { AppError, ValidationError } from '../errors/index.js';

/** The options of `issueCertificate` (or `renewAt`) are inconsistent; lists every problem found. */
export class CertificateOptionsError extends ValidationError {
  override readonly code: string = 'CERT_OPTIONS_INVALID';
}

/** Bytes that should be DER are not (truncated, indefinite length, unexpected tag). */
export class DerDecodeError extends AppError {
  readonly code = 'DER_INVALID';
  readonly status = 400;
}
