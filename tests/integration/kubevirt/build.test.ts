/**
 * tests/env/build-kubevirt.sh: the cached KubeVirt binaries are found at once; a binary missing with
 * no way to fetch modules stops with the binaries named and how to build them.
 */
import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { KUBEVIRT_SCRIPT, ensureKubeVirtBinaries } from '../../env/binaries.js';
import { runOffline } from '../../env/offline.js';

describe('the KubeVirt build of the test environment', () => {
  it('returns the cache directory holding virt-controller, virt-api and kubevirt-crds', async () => {
    const dir = await ensureKubeVirtBinaries();
    expect(dir).toMatch(/kubevirt-1\.6\.0$/);
    for (const bin of ['virt-controller', 'virt-api', 'kubevirt-crds']) {
      const run = spawnSync(join(dir, bin), ['--help'], { encoding: 'utf8' });
      expect(run.error).toBeUndefined();
    }
  });

  it('without the binaries and without the Go module proxy, names the missing binaries and how to build them, and stops', () => {
    const run = runOffline(KUBEVIRT_SCRIPT);
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('FAILED at step "download kubevirt.io/kubevirt@v1.6.0"');
    expect(run.stderr).toContain(`missing: virt-controller virt-api kubevirt-crds in ${run.cache}/kubevirt-1.6.0;`);
    expect(run.stderr).toContain("build it with 'bash tests/env/build-kubevirt.sh'");
  });
});
