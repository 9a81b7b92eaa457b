import { describe, expect, it } from '@jest/globals';
import { startNodeProcess } from '../../shared/runtime/testing/index.js';
import { knativeServiceEnv, containerMemoryLimit, memoryCage } from './processes.js';

const SCRIPT = `const { heap_size_limit: limit } = require('node:v8').getHeapStatistics();
console.log(JSON.stringify({ limit, cgroup: require('node:fs').readFileSync('/proc/self/cgroup', 'utf8'), pid: process.pid }));`;

/** V8's heap limit and memory cgroup of a node process started by startNodeProcess (entering `enter` first when given). */
async function heapLimitOf(enter?: string): Promise<{ limit: number; cgroup: string; pid: number | undefined; nodePid: number }> {
  const proc = startNodeProcess(['-e', SCRIPT], enter === undefined ? {} : { enter });
  const record = await proc.waitForLog((r) => typeof r['limit'] === 'number');
  await proc.exited;
  return { limit: record['limit'] as number, cgroup: record['cgroup'] as string, pid: proc.child.pid, nodePid: record['pid'] as number };
}

describe('the Knative Service a bench runs a function as', () => {
  it("reads the audit Service's memory limit and env from its manifest", () => {
    expect(containerMemoryLimit('knative/functions/audit.yaml')).toBe(256 * 2 ** 20);
    expect(knativeServiceEnv('knative/functions/audit.yaml')['NODE_OPTIONS']).toContain('--max-semi-space-size');
  });

  it('finds the workload among several documents (a Service beside its other objects), and a Deployment or a DaemonSet', () => {
    expect(containerMemoryLimit('knative/functions/admission.yaml')).toBe(256 * 2 ** 20);
    expect(containerMemoryLimit('knative/daemons/controller/deployment.yaml')).toBe(512 * 2 ** 20);
    expect(containerMemoryLimit('knative/daemons/route-forge/daemonset.yaml')).toBe(256 * 2 ** 20);
  });
});

// Making a memory cgroup needs root and a memory controller; where there is none the benches say so and run unconstrained.
const probe = memoryCage('probe', 256 * 2 ** 20);
const cagesHere = !('unavailable' in probe);
if (!('unavailable' in probe)) probe.remove();

describe('memoryCage', () => {
  (cagesHere ? it : it.skip)('puts a process that enters it under its limit, and node sizes its heap from that limit', async () => {
    const cage = memoryCage('test', 256 * 2 ** 20);
    if ('unavailable' in cage) throw new Error(cage.unavailable);
    try {
      const free = await heapLimitOf();
      const caged = await heapLimitOf(cage.enterCommand);
      // The shell that entered the cgroup became node: the child's pid is node's.
      expect(caged.nodePid).toBe(caged.pid);
      expect(caged.cgroup).toContain(`bench-test-${process.pid}`);
      expect(free.cgroup).not.toContain('bench-test-');
      // About 275 MB in a 256 MiB cgroup here, against gigabytes from the machine's memory.
      expect(caged.limit).toBeLessThan(512 * 2 ** 20);
      expect(free.limit).toBeGreaterThan(caged.limit);
      expect(cage.peakBytes()).toBeGreaterThan(0);
      expect(cage.limitHits()).toBe(0);
    } finally {
      cage.remove();
    }
  });
});
