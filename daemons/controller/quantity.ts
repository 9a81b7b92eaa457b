/** Kubernetes resource quantities as numbers (bytes for memory, cores for CPU). */

const BINARY: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
const DECIMAL: Record<string, number> = { n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };

/** `4Gi` → 4294967296, `500m` → 0.5, `1e3` → 1000; undefined when it is not a quantity. */
export function parseQuantity(value: string | number | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'number') return value;
  const m = /^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(?:([KMGTPE]i)|([eE][+-]?\d+)|([numkMGTPE]?))$/.exec(value.trim());
  if (m === null) return undefined;
  const number = Number(m[1]);
  if (m[2] !== undefined) return number * (BINARY[m[2]] ?? 1);
  if (m[3] !== undefined) return number * 10 ** Number(m[3].slice(1));
  return number * (DECIMAL[m[4] ?? ''] ?? 1);
}

/** CPU as a quantity string: whole cores as `2`, fractions as millicores `1500m`. */
export function formatCpu(cores: number): string {
  const milli = Math.round(cores * 1000);
  return milli % 1000 === 0 ? String(milli / 1000) : `${milli}m`;
}
