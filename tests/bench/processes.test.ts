import { describe, expect, it } from '@jest/globals';
import { startNodeProcess } from '../../shared/runtime/testing/index.js';
import { cageFor, containerMemoryLimit, knativeServiceEnv, memoryCage } from './processes.js';

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

describe('memoryCage', () => {
  // The test environment runs as root with a memory controller (the benches' machine); where a cgroup cannot be made, this fails with the reason.
  it('puts a process that enters it under its limit, and node sizes its heap from that limit', async () => {
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

describe('cageFor', () => {
  it('runs a unit without a cgroup when told why, and says so', async () => {
    const caged = cageFor('knative/functions/audit.yaml', 'test-unless', 'a heap snapshot is taken');
    expect(caged.cage).toBeUndefined();
    expect(caged.start).toEqual({});
    expect(caged.note).toBe("WITHOUT its container's memory limit (a heap snapshot is taken): node sizes V8's heap from the machine's memory");
    expect(caged.usage()).toBe('memory: no cgroup (no limit)');
    expect((await heapLimitOf(caged.start.enter)).cgroup).not.toContain('bench-test-unless');
  });

  it("runs a unit in a cgroup limited as its manifest's container, and reports what it held", async () => {
    const caged = cageFor('knative/daemons/controller/deployment.yaml', 'test-deploy');
    try {
      expect(caged.cage?.limitBytes).toBe(512 * 2 ** 20);
      expect(caged.note).toContain('(512 MiB)');
      expect((await heapLimitOf(caged.start.enter)).cgroup).toContain(`bench-test-deploy-${process.pid}`);
      expect(caged.usage()).toMatch(/^memory cgroup: limit 512 MiB, most held [1-9]\d* MiB .* limit reached 0 times$/);
    } finally {
      caged.remove();
    }
  });
});
