/**
 * metav1.MicroTime on the wire: RFC 3339 in UTC with exactly six fractional digits,
 * `2026-12-02T14:09:02.123456Z`. The apiserver parses it with a fixed six-digit layout, so the three
 * digits of `Date.toISOString()` are rejected; Lease acquire/renew times and events.k8s.io eventTime
 * use this type.
 */

/** Microseconds since the Unix epoch (a safe integer until the year 2255). */
export type EpochMicros = number;

const MICRO_TIME = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/i;

/** Format epoch microseconds as a MicroTime string. */
export function formatMicroTime(micros: EpochMicros): string {
  if (!Number.isSafeInteger(micros)) throw new RangeError(`not an integer count of microseconds: ${micros}`);
  const ms = Math.floor(micros / 1000);
  const fraction = micros - ms * 1000; // 0..999 also for times before 1970
  const iso = new Date(ms).toISOString(); // YYYY-MM-DDTHH:mm:ss.sssZ
  return `${iso.slice(0, 23)}${String(fraction).padStart(3, '0')}Z`;
}

/** Format a Date (millisecond precision) as a MicroTime string. */
export function formatMicroTimeFromDate(date: Date): string {
  return formatMicroTime(date.getTime() * 1000);
}

/**
 * Parse a MicroTime (or any RFC 3339 time with 0 to 9 fractional digits and a zone offset) to epoch
 * microseconds; digits beyond the sixth are truncated. Throws a RangeError for anything else.
 */
export function parseMicroTime(text: string): EpochMicros {
  const match = MICRO_TIME.exec(text);
  if (!match) throw new RangeError(`not an RFC 3339 time: ${JSON.stringify(text)}`);
  const [, rawWhole = '', digits = '', zone = 'Z'] = match;
  const whole = rawWhole.toUpperCase();
  const offsetMs = zoneOffsetMs(zone);
  const ms = Date.parse(`${whole}Z`) - offsetMs;
  // Date.parse rolls some impossible times over (24:00:00); the round trip catches those.
  if (Number.isNaN(ms) || new Date(ms + offsetMs).toISOString().slice(0, 19) !== whole) {
    throw new RangeError(`not a valid calendar time: ${JSON.stringify(text)}`);
  }
  return ms * 1000 + Number(digits.padEnd(6, '0').slice(0, 6));
}

/** Now in epoch microseconds from a millisecond clock (fractional milliseconds are kept). */
export function nowMicros(nowMs: () => number = Date.now): EpochMicros {
  return Math.floor(nowMs() * 1000);
}

function zoneOffsetMs(zone: string): number {
  if (zone.toUpperCase() === 'Z') return 0;
  const sign = zone.startsWith('-') ? -1 : 1;
  return sign * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6))) * 60_000;
}
