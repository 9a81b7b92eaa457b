/** Address allocation over the virtualMachineCIDRs (IPv4 arithmetic itself is shared/api/ipv4.ts). */
import { formatIPv4, isUsableIn, parseSubnet, type Subnet } from '../../../../shared/api/ipv4.js';

/** The subnets of valid CIDRs, in the given order (invalid entries are skipped). */
export function rangesOf(cidrs: readonly string[]): Subnet[] {
  return cidrs.map(parseSubnet).filter((r): r is Subnet => r !== undefined);
}

/** Whether an address may be handed out: usable in one of the subnets (not its network or broadcast address). */
export function isAssignable(ip: number, ranges: readonly Subnet[]): boolean {
  return ranges.some((r) => isUsableIn(r, ip));
}

/** The first assignable address, in CIDR order, that `taken` does not hold. */
export function nextFree(ranges: readonly Subnet[], taken: (ip: string) => boolean): string | undefined {
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
