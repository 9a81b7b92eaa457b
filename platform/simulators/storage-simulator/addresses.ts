/**
 * Pod IPs for the pods the simulator runs: addresses of 127.0.0.0/8, which every Linux host routes to
 * itself, so a program bound to its pod IP is reachable there from any local process (the controller
 * reads an importer's progress from `<podIP>:8080/metrics` as in a cluster) and two pods' servers on
 * the same port do not collide. Each simulator draws its own /16 (`127.<n>.0.0`), so two simulators
 * on one machine (a platform and a test run) rarely share addresses.
 */
import { randomInt } from 'node:crypto';

export const LOOPBACK_PREFIX = /^127\.(\d{1,3})$/;

export class PodAddresses {
  private n = 0;

  /** `prefix` is `127.<n>` (n in 1..254); random when omitted. */
  constructor(readonly prefix: string = `127.${randomInt(16, 251)}`) {
    const m = LOOPBACK_PREFIX.exec(prefix);
    const second = Number(m?.[1]);
    if (m === null || second < 1 || second > 254) throw new Error(`pod IP prefix must be 127.<1-254>, got ${prefix}`);
  }

  /** The next address: 127.<n>.<0-253>.<1-254>, round-robin over 64516 addresses. */
  next(): string {
    const i = this.n++ % (254 * 254);
    return `${this.prefix}.${Math.floor(i / 254)}.${(i % 254) + 1}`;
  }
}
