/**
 * The kernel port in memory, for unit tests: one table and its rules, lookups from a map, and the
 * batch lines route-forge writes interpreted back. Lines naming a device in `refuse` fail the way
 * the kernel fails them; the others still apply.
 */
import type { Kernel, KernelEvent, KernelRead, LineFailure } from './iproute2.js';
import { routeKey, type Lookup, type Route, type Rule } from './model.js';

export class FakeKernel implements Kernel {
  readonly routes = new Map<string, Route>();
  rules: Rule[] = [];
  readonly lookups = new Map<string, Lookup>();
  readonly refuse = new Set<string>();
  reads = 0;
  lookupReads = 0;
  readonly applied: string[][] = [];
  private listener: ((event: KernelEvent) => void) | undefined;

  read(nodeAddresses: readonly string[]): Promise<KernelRead> {
    this.reads++;
    return Promise.resolve({ lookups: this.lookupsOf(nodeAddresses), state: { routes: [...this.routes.values()], rules: [...this.rules] } });
  }

  lookup(nodeAddresses: readonly string[]): Promise<ReadonlyMap<string, Lookup>> {
    this.lookupReads++;
    return Promise.resolve(this.lookupsOf(nodeAddresses));
  }

  apply(lines: readonly string[]): Promise<LineFailure[]> {
    this.applied.push([...lines]);
    const failures: LineFailure[] = [];
    lines.forEach((line, index) => {
      const device = /\bdev (\S+)/.exec(line)?.[1];
      if (device !== undefined && this.refuse.has(device)) failures.push({ index, message: `Cannot find device "${device}"` });
      else this.interpret(line);
    });
    return Promise.resolve(failures);
  }

  watch(_table: number, onChange: (event: KernelEvent) => void): Promise<void> {
    this.listener = onChange;
    return Promise.resolve();
  }

  /** What the monitor would report. */
  emit(event: KernelEvent): void {
    this.listener?.(event);
  }

  private lookupsOf(addresses: readonly string[]): Map<string, Lookup> {
    return new Map(addresses.map((a) => [a, this.lookups.get(a) ?? { ok: false, error: 'Network is unreachable' }]));
  }

  private interpret(line: string): void {
    const words = line.split(' ');
    const arg = (name: string): string | undefined => {
      const at = words.indexOf(name);
      return at === -1 ? undefined : words[at + 1];
    };
    const metric = Number(arg('metric') ?? 0);
    if (words[0] === 'route' && words[1] === 'replace') {
      const blackhole = words[2] === 'blackhole';
      const route: Route = {
        dst: words[blackhole ? 3 : 2] ?? '',
        type: blackhole ? 'blackhole' : 'unicast',
        gateway: arg('via'),
        dev: arg('dev'),
        prefsrc: arg('src'),
        metric,
      };
      this.routes.set(routeKey(route), route);
    } else if (words[0] === 'route' && words[1] === 'del') {
      this.routes.delete(routeKey({ dst: words[2] ?? '', metric }));
    } else if (words[0] === 'rule' && words[1] === 'add') {
      this.rules.push({ priority: Number(arg('priority')), dst: arg('to'), table: arg('lookup') ?? '' });
    } else if (words[0] === 'rule' && words[1] === 'del') {
      const at = this.rules.findIndex((r) => r.priority === Number(arg('priority')) && r.dst === arg('to') && r.table === arg('lookup'));
      if (at !== -1) this.rules.splice(at, 1);
    }
  }
}
