/**
 * tests/env/knative-modules.sh (through tests/env/go-build-lib.sh): the cached Knative parts are found
 * at once; a part missing with no Go module proxy reachable names the step, what is missing and how to
 * get it, and stops.
 */
import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runOffline } from '../../env/offline.js';

const SCRIPT = fileURLToPath(new URL('../../env/knative-modules.sh', import.meta.url));
const VERSION = readFileSync(fileURLToPath(new URL('../../env/knative-version', import.meta.url)), 'utf8').trim();

describe('the Knative parts of the test environment', () => {
  it('finds every part in the cache at once, queue-proxy, the autoscaler and its networking parts among them', () => {
    const run = spawnSync('bash', [SCRIPT], { encoding: 'utf8' });
    expect(run.status).toBe(0);
    const dir = run.stdout.trim();
    expect(dir).toMatch(new RegExp(`knative-${VERSION.replaceAll('.', '\\.')}$`));
    for (const part of ['serving', 'serving-config', 'eventing', 'eventing-config', 'serving-webhook', 'eventing-webhook', 'queue-proxy', 'autoscaler', 'networking']) {
      expect([part, existsSync(join(dir, part))]).toEqual([part, true]);
    }
  });

  it('without the parts and without the Go module proxy, names the step, what is missing and how to build it, and stops', () => {
    const run = runOffline(SCRIPT);
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(`[knative-modules] FAILED at step "download knative.dev/serving@v0.${Number(VERSION.split('.')[1]) + 27}.`);
    expect(run.stderr).toContain(`missing: knative.dev/serving's manifests or binaries (serving-webhook queue-proxy autoscaler) in ${run.cache}/knative-${VERSION};`);
    expect(run.stderr).toContain('the Go module proxy is not reachable (off)');
    expect(run.stderr).toContain("build it with 'bash tests/env/knative-modules.sh'");
  });
});
