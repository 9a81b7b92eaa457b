import { BadRequestError, errorMessage } from '../../errors/index.js';

/** Parse JSON text, or throw a BadRequestError that says what was being parsed and why it failed. */
export function parseJson(text: string, what: string): unknown {
  if (text.trim() === '') throw new BadRequestError(`${what} is empty; expected JSON`);
  try {
    return JSON.parse(text) as unknown;
  } catch (err: unknown) {
    throw new BadRequestError(`${what} is not valid JSON: ${errorMessage(err)}`, { cause: err });
  }
}

/** `object`, `array`, `null`, `string`...: how a JSON value's kind is named in error messages. */
export function jsonKind(value: unknown): string {
  if (value === null) return 'null';
  return Array.isArray(value) ? 'array' : typeof value;
}

/** The media type of a Content-Type header: lower case, without parameters. */
export function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';', 1)[0]?.trim().toLowerCase() ?? '';
}

export function isJsonMediaType(type: string): boolean {
  return type === 'application/json' || type === 'text/json' || type.endsWith('+json');
}

/** How a request without Content-Type is described in messages. */
export const NO_CONTENT_TYPE = 'no Content-Type';
