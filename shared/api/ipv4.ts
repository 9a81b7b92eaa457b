/** IPv4 addresses and subnets as 32-bit numbers: parsing, alignment, containment, overlap, and the
 *  VirtualMachineIPAddressLease naming (`ip-10-0-0-5`). */

export interface Subnet {
  readonly text: string;
  readonly first: number;
  readonly last: number;
}

const ADDRESS = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

export function parseIPv4(text: string): number | undefined {
  const m = ADDRESS.exec(text);
  if (m === null) return undefined;
  const octets = m.slice(1, 5).map(Number);
  if (octets.some((o) => o > 255) || m.slice(1, 5).some((o) => o.length > 1 && o.startsWith('0'))) return undefined;
  return octets.reduce((acc, o) => acc * 256 + o, 0);
}

export function formatIPv4(value: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(value / 2 ** shift) % 256).join('.');
}

/** `10.0.0.0/24` (any address inside the block is accepted and the block is taken). */
export function parseSubnet(text: string): Subnet | undefined {
  const [address, bitsText, extra] = text.split('/');
  if (address === undefined || bitsText === undefined || extra !== undefined || !/^\d{1,2}$/.test(bitsText)) return undefined;
  const ip = parseIPv4(address);
  const bits = Number(bitsText);
  if (ip === undefined || bits > 32) return undefined;
  const size = 2 ** (32 - bits);
  const first = ip - (ip % size);
  return { text, first, last: first + size - 1 };
}

/** An IPv4 subnet whose address is aligned to its mask (10.0.0.0/24, not 10.0.0.1/24). */
export function isAlignedCIDR(text: string): boolean {
  const [address] = text.split('/');
  const subnet = parseSubnet(text);
  return subnet !== undefined && parseIPv4(address ?? '') === subnet.first;
}

export function overlaps(a: Subnet, b: Subnet): boolean {
  return a.first <= b.last && b.first <= a.last;
}

export function contains(subnet: Subnet, ip: number): boolean {
  return ip >= subnet.first && ip <= subnet.last;
}

/** An address usable for a VM: inside the subnet and, for subnets larger than one address, not its first or last. */
export function isUsableIn(subnet: Subnet, ip: number): boolean {
  if (!contains(subnet, ip)) return false;
  return subnet.first === subnet.last || (ip !== subnet.first && ip !== subnet.last);
}

/** The IP a lease name encodes: `ip-10-0-0-5` -> 10.0.0.5. */
export function leaseNameToIP(name: string): string | undefined {
  const m = /^ip-(\d{1,3})-(\d{1,3})-(\d{1,3})-(\d{1,3})$/.exec(name);
  if (m === null) return undefined;
  const ip = m.slice(1, 5).join('.');
  return parseIPv4(ip) === undefined ? undefined : ip;
}

export function ipToLeaseName(ip: string): string {
  return `ip-${ip.replaceAll('.', '-')}`;
}
