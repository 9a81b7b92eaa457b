/**
 * iproute2 batch lines (`ip -batch`): the changes to apply, and the reads of one sync (route lookups
 * of the node addresses, the rules, the dedicated table). Pure. Every value put on a line has been
 * parsed as an address, a CIDR or a device name first, so no line can carry a second command.
 */
import type { Change, Route } from './model.js';

const ADDRESS = /^\d{1,3}(\.\d{1,3}){3}$/;
const PREFIX = /^\d{1,3}(\.\d{1,3}){3}\/\d{1,2}$/;
/** What the kernel accepts as an interface name (IFNAMSIZ 16, no slash, colon or white space). */
const DEVICE = /^[A-Za-z0-9_.@-]{1,15}$/;

export class UnsafeCommandError extends Error {
  constructor(what: string, value: string) {
    super(`refusing to put ${what} ${JSON.stringify(value)} on an ip command line`);
    this.name = 'UnsafeCommandError';
  }
}

function checked(value: string, pattern: RegExp, what: string): string {
  if (!pattern.test(value)) throw new UnsafeCommandError(what, value);
  return value;
}

function routeSpec(route: Route, table: number): string {
  const parts: string[] = [];
  if (route.type === 'blackhole') parts.push('blackhole');
  parts.push(checked(route.dst, PREFIX, 'destination'));
  if (route.type !== 'blackhole') {
    if (route.gateway !== undefined) parts.push('via', checked(route.gateway, ADDRESS, 'gateway'));
    if (route.dev !== undefined) parts.push('dev', checked(route.dev, DEVICE, 'device'));
    if (route.prefsrc !== undefined) parts.push('src', checked(route.prefsrc, ADDRESS, 'source address'));
  }
  parts.push('table', String(table));
  if (route.metric !== 0) parts.push('metric', String(route.metric));
  return parts.join(' ');
}

/** One batch line for one change. */
export function commandFor(change: Change, table: number): string {
  switch (change.op) {
    case 'route-replace':
      return `route replace ${routeSpec(change.route, table)}`;
    case 'route-delete':
      // Destination, table and metric identify the route; its type need not be given (blackhole too).
      return `route del ${checked(change.route.dst, PREFIX, 'destination')} table ${table} metric ${change.route.metric}`;
    case 'rule-add':
      return `rule add to ${checked(change.cidr, PREFIX, 'CIDR')} lookup ${table} priority ${table}`;
    case 'rule-delete':
      return `rule del priority ${change.rule.priority} to ${checked(change.rule.dst ?? '', PREFIX, 'rule destination')} lookup ${table}`;
  }
}

/** The route lookups of the node addresses, for `ip -json -force -batch -`. */
export function readCommands(nodeAddresses: readonly string[]): string[] {
  return nodeAddresses.map((ip) => `route get ${checked(ip, ADDRESS, 'node address')}`);
}
