import { afterAll, describe, expect, it } from '@jest/globals';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeMode, kubeVirtMode } from './start-kubevirt.js';

const dir = mkdtempSync(join(tmpdir(), 'kubevirt-mode-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function binaries(name: string, files: Record<string, number>): string {
  const at = join(dir, name);
  mkdirSync(at);
  for (const [file, mode] of Object.entries(files)) {
    writeFileSync(join(at, file), '#!/bin/sh\n');
    chmodSync(join(at, file), mode);
  }
  return at;
}

describe('which KubeVirt npm start runs', () => {
  it('is real when virt-controller and virt-api are built, and says so with the version', () => {
    const at = binaries('built', { 'virt-controller': 0o755, 'virt-api': 0o755 });
    const mode = kubeVirtMode({ VIRT_TESTENV_KUBEVIRT_DIR: at });
    expect(mode).toEqual({ real: true, binDir: at });
    expect(describeMode(mode)).toMatch(/^KubeVirt: REAL virt-controller and virt-api v1\.6\.0 .*the simulator plays only virt-handler/);
  });

  it('falls back to the simulator naming what is missing, where, and how to build it', () => {
    const at = binaries('half', { 'virt-controller': 0o755, 'virt-api': 0o644 });
    const mode = kubeVirtMode({ VIRT_TESTENV_KUBEVIRT_DIR: at });
    expect(mode.real).toBe(false);
    expect(describeMode(mode)).toBe(
      `KubeVirt: SIMULATED (virt-controller and virt-handler by the simulator): virt-api not built in ${at}; build them with \`bash tests/env/build-kubevirt.sh\` (about 8 minutes cold on 2 cores, from the Go module proxy)`,
    );
    expect(describeMode(kubeVirtMode({ VIRT_TESTENV_KUBEVIRT_DIR: join(dir, 'nothing') }))).toContain(
      `virt-controller and virt-api not built in ${join(dir, 'nothing')}`,
    );
  });

  it('looks in the cache of build-kubevirt.sh for the pinned version when no directory is given', () => {
    const cache = join(dir, 'cache');
    binaries('cache', {});
    binaries(join('cache', 'kubevirt-1.6.0'), { 'virt-controller': 0o755, 'virt-api': 0o755 });
    expect(kubeVirtMode({ VIRT_TESTENV_CACHE: cache })).toEqual({ real: true, binDir: join(cache, 'kubevirt-1.6.0') });
    expect(kubeVirtMode({ VIRT_TESTENV_CACHE: cache, KUBEVIRT_VERSION: '1.5.2' }).real).toBe(false);
  });
});
