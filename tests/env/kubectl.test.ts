import { describe, expect, it } from '@jest/globals';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runKubectl } from './kubectl.js';

describe('runKubectl', () => {
  it('answers with the exit code of a kubectl that ends before it reads its input (no EPIPE thrown out of the caller)', async () => {
    const binDir = await mkdtemp(join(tmpdir(), 'kubectl-epipe-'));
    try {
      await writeFile(join(binDir, 'kubectl'), '#!/bin/sh\necho "error: unknown flag" >&2\nexit 3\n');
      await chmod(join(binDir, 'kubectl'), 0o755);
      // Far more than a pipe holds, so the write is still going when kubectl has exited.
      const manifest = 'x'.repeat(8 * 1024 * 1024);
      const result = await runKubectl({ binDir, kubeconfigPath: '/nonexistent' }, ['apply', '-f', '-'], { stdin: manifest });
      expect(result).toMatchObject({ code: 3, stderr: 'error: unknown flag\n' });
    } finally {
      await rm(binDir, { recursive: true, force: true });
    }
  });
});
