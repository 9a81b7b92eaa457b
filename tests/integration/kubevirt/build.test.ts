/**
 * tests/env/build-kubevirt.sh: the cached KubeVirt binaries are found at once; a binary missing with
 * no way to fetch modules stops with the binaries named and how to build them.
 */
import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KUBEVIRT_SCRIPT, ensureKubeVirtBinaries } from '../../env/binaries.js';

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
    const cache = mkdtempSync(join(tmpdir(), 'kv-cache-'));
    const modcache = mkdtempSync(join(tmpdir(), 'kv-mod-'));
    try {
      const run = spawnSync('bash', [KUBEVIRT_SCRIPT], {
        encoding: 'utf8',
        env: { ...process.env, VIRT_TESTENV_CACHE: cache, GOMODCACHE: modcache, GOPROXY: 'off', GOFLAGS: '' },
      });
      expect(run.status).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain('FAILED at step "download kubevirt.io/kubevirt@v1.6.0"');
      expect(run.stderr).toContain(`missing: virt-controller virt-api kubevirt-crds in ${cache}/kubevirt-1.6.0;`);
      expect(run.stderr).toContain("build it with 'bash tests/env/build-kubevirt.sh'");
    } finally {
      rmSync(cache, { recursive: true, force: true });
      spawnSync('chmod', ['-R', 'u+w', modcache]);
      rmSync(modcache, { recursive: true, force: true });
    }
  });
});
