/** Kubernetes resource quantities ("10Gi", "1.5G", "500m", "1e3", 1024) as numbers for comparison. */

const BINARY: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
const DECIMAL: Record<string, number> = { n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };
const SYNTAX = /^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(?:([KMGTPE]i)|([numkMGTPE])|[eE]([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)))?$/;

/** The value of a quantity, or undefined when it is not one. */
export function parseQuantity(q: string | number | undefined): number | undefined {
  if (q === undefined) return undefined;
  if (typeof q === 'number') return Number.isFinite(q) ? q : undefined;
  const m = SYNTAX.exec(q);
  if (m === null) return undefined;
  const base = Number(m[1]);
  const [, , binary, decimal, exponent] = m;
  let value: number;
  if (binary !== undefined) value = base * (BINARY[binary] ?? Number.NaN);
  else if (exponent !== undefined) value = base * 10 ** Number(exponent);
  else value = base * (DECIMAL[decimal ?? ''] ?? Number.NaN);
  return Number.isFinite(value) ? value : undefined;
}

/** A byte count for messages: "2Gi", "1.5Gi", "512Mi", "1000". */
export function formatBytes(bytes: number): string {
  for (const [suffix, size] of Object.entries(BINARY).reverse()) {
    if (bytes >= size) return `${Number((bytes / size).toFixed(2))}${suffix}`;
  }
  return String(bytes);
}

/** CPU as a quantity string: whole cores as `2`, fractions as millicores `1500m`. */
export function formatCpu(cores: number): string {
  const milli = Math.round(cores * 1000);
  return milli % 1000 === 0 ? String(milli / 1000) : `${milli}m`;
}
