import { CloudEvent, ValidationError as SdkValidationError } from 'cloudevents';
import { BadRequestError, errorMessage } from '../../errors/index.js';

/** The one CloudEvents version this host accepts (all Knative sources and brokers emit it). */
export const SPEC_VERSION = '1.0';

export const REQUIRED_ATTRIBUTES = ['id', 'source', 'type', 'specversion'] as const;

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** How the attributes are read in one mode, and how that mode names them in messages. */
export interface AttributeSource {
  /** `binary-mode CloudEvent`, `batch element 3`... */
  readonly what: string;
  readonly get: (attribute: string) => unknown;
  /** `ce-id` for headers, `id` for structured attributes. */
  readonly spell: (attribute: string) => string;
}

/**
 * The checks the SDK skips when it decodes: required attributes present (it invents an id and a
 * specversion), a supported specversion, and an RFC 3339 time (it silently replaces a bad one).
 */
export function checkAttributes({ what, get, spell }: AttributeSource): void {
  const missing = REQUIRED_ATTRIBUTES.filter((a) => typeof get(a) !== 'string' || get(a) === '');
  if (missing.length > 0) {
    throw new BadRequestError(`${what} is missing ${missing.map(spell).join(', ')} (non-empty strings)`);
  }
  const version = get('specversion') as string;
  if (version !== SPEC_VERSION) {
    throw new BadRequestError(`unsupported CloudEvents specversion "${version}"; this host accepts ${SPEC_VERSION}`);
  }
  const time = get('time');
  if (time !== undefined && (typeof time !== 'string' || !RFC3339.test(time) || Number.isNaN(Date.parse(time)))) {
    throw new BadRequestError(`${what}: ${spell('time')} ${JSON.stringify(time)} is not an RFC 3339 timestamp`);
  }
}

/**
 * Build an event with the SDK and validate it against the CloudEvents 1.0 schema, turning every SDK
 * complaint into a BadRequestError with a readable message.
 */
export function sdkEvent(build: () => CloudEvent<unknown>): CloudEvent<unknown> {
  try {
    const event = build();
    event.validate();
    return event;
  } catch (err: unknown) {
    if (err instanceof BadRequestError) throw err;
    throw new BadRequestError(`invalid CloudEvent: ${describeSdkError(err)}`, { cause: err });
  }
}

function describeSdkError(err: unknown): string {
  if (!(err instanceof SdkValidationError) || !Array.isArray(err.errors) || err.errors.length === 0) {
    return errorMessage(err).split('\n', 1)[0] ?? 'unknown problem';
  }
  return err.errors.map((e) => (typeof e === 'string' ? e : `${e.instancePath.replace(/^\//, '') || 'event'} ${e.message ?? 'is invalid'}`)).join('; ');
}
