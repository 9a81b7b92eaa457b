/** IPv4 arithmetic for IPAM: parse, format, ranges of CIDRs, lease names, the next free address. */

export interface Range {
  cidr: string;
  /** First and last address of the prefix, as numbers. */
  first: number;
  last: number;
}

/** `10.0.0.5` → number, or undefined for anything that is not a dotted IPv4 address. */
export function parseIPv4(text: string): number | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (m === null) return undefined;
  const octets = m.slice(1, 5).map(Number);
  if (octets.some((o) => o > 255)) return undefined;
  return octets.reduce((acc, o) => acc * 256 + o, 0);
}

export function formatIPv4(value: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(value / 2 ** shift) % 256).join('.');
}

export function parseCIDR(cidr: string): Range | undefined {
  const [address, bitsText] = cidr.split('/');
  const base = parseIPv4(address ?? '');
  const bits = Number(bitsText);
  if (base === undefined || !Number.isInteger(bits) || bits < 0 || bits > 32) return undefined;
  const size = 2 ** (32 - bits);
  const first = base - (base % size);
  return { cidr, first, last: first + size - 1 };
}

/** The ranges of valid CIDRs, in the given order (invalid entries are skipped). */
export function rangesOf(cidrs: readonly string[]): Range[] {
  return cidrs.map(parseCIDR).filter((r): r is Range => r !== undefined);
}

/** Whether an address may be handed out: inside a range and not its network or broadcast address. */
export function isAssignable(ip: number, ranges: readonly Range[]): boolean {
  return ranges.some((r) => ip >= r.first && ip <= r.last && (r.first === r.last || (ip !== r.first && ip !== r.last)));
}

/** The first assignable address, in CIDR order, that `taken` does not hold. */
export function nextFree(ranges: readonly Range[], taken: (ip: string) => boolean): string | undefined {
  for (const r of ranges) {
    const lo = r.first === r.last ? r.first : r.first + 1;
    const hi = r.first === r.last ? r.last : r.last - 1;
    for (let ip = lo; ip <= hi; ip++) {
      const text = formatIPv4(ip);
      if (!taken(text)) return text;
    }
  }
  return undefined;
}

/** The lease name that encodes an address: `10.0.0.5` → `ip-10-0-0-5`. */
export function leaseNameOf(ip: string): string {
  return `ip-${ip.replaceAll('.', '-')}`;
}

/** The address a lease name encodes, or undefined when the name is not a lease name. */
export function ipOfLeaseName(name: string): string | undefined {
  const m = /^ip-(\d{1,3})-(\d{1,3})-(\d{1,3})-(\d{1,3})$/.exec(name);
  if (m === null) return undefined;
  const ip = m.slice(1, 5).join('.');
  return parseIPv4(ip) === undefined ? undefined : ip;
}
