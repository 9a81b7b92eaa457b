/** Go-style durations as the original's WAIT_TIMEOUT took them (`1200s`, `20m`, `1h30m`, `500ms`). */
const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 } as const;
const WHOLE = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h))+$/;
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h)/g;

/** Milliseconds of a duration, or undefined when the text is not one. */
export function durationMs(text: string): number | undefined {
  if (!WHOLE.test(text)) return undefined;
  let sum = 0;
  for (const [, amount, unit] of text.matchAll(PART)) sum += Number(amount) * UNIT_MS[unit as keyof typeof UNIT_MS];
  return Math.round(sum);
}
