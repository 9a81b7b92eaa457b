import { AppError } from '../errors/index.js';

/** The request headers exceed the server's limit (HTTP 431). */
export class HeadersTooLargeError extends AppError {
  readonly code = 'HEADERS_TOO_LARGE';
  readonly status = 431;
}

/** The client did not send the whole request within REQUEST_TIMEOUT_MS (HTTP 408). */
export class RequestTimeoutError extends AppError {
  readonly code = 'REQUEST_TIMEOUT';
  readonly status = 408;
}

/** The function declaration itself is unusable (no handler at all, say): a programming error. */
export class DefinitionError extends AppError {
  readonly code = 'FUNCTION_DEFINITION';
  readonly status = 500;
}
