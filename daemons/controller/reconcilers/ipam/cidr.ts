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

/** A free address and its position: the assignable addresses of all subnets numbered 0, 1, ... in CIDR order. */
export interface FreeAddress {
  readonly ip: string;
  readonly position: number;
}

/**
 * The first assignable address, in CIDR order, at or after position `from`, that `taken` does not
 * hold (`taken` is asked about each address passed, in order, with its position).
 */
export function nextFree(ranges: readonly Subnet[], taken: (ip: string, position: number) => boolean, from = 0): FreeAddress | undefined {
  let base = 0;
  for (const r of ranges) {
    const lo = r.first === r.last ? r.first : r.first + 1;
    const hi = r.first === r.last ? r.last : r.last - 1;
    const size = Math.max(0, hi - lo + 1);
    for (let i = Math.max(0, from - base); i < size; i++) {
      const text = formatIPv4(lo + i);
      if (!taken(text, base + i)) return { ip: text, position: base + i };
    }
    base += size;
  }
  return undefined;
}
