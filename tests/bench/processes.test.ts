import { describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { knativeServiceEnv, knativeServiceMemoryLimit, memoryCage } from './processes.js';

const run = promisify(execFile);

/** V8's heap limit and memory cgroup of a node process started by `prefix` (a shell command, may be empty). */
async function heapLimitAfter(prefix: string): Promise<{ limit: number; cgroup: string }> {
  const script = `console.log(JSON.stringify({ limit: require('node:v8').getHeapStatistics().heap_size_limit, cgroup: require('node:fs').readFileSync('/proc/self/cgroup', 'utf8') }))`;
  const { stdout } = await run('bash', ['-c', `${prefix} exec "$0" -e "$1"`, process.execPath, script]);
  return JSON.parse(stdout) as { limit: number; cgroup: string };
}

describe('the Knative Service a bench runs a function as', () => {
  it("reads the audit Service's memory limit and env from its manifest", () => {
    expect(knativeServiceMemoryLimit('knative/functions/audit.yaml')).toBe(256 * 2 ** 20);
    expect(knativeServiceEnv('knative/functions/audit.yaml')['NODE_OPTIONS']).toContain('--max-semi-space-size');
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
      const free = await heapLimitAfter('');
      const caged = await heapLimitAfter(`${cage.enterCommand};`);
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
