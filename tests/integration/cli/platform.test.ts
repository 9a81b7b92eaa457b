/**
 * The acceptance of issue 12 for the CLI, on the local platform as a person starts it (`npm start`,
 * tests/integration/platform/fixtures.ts): `d8v console` in a real terminal (tmux) shows the prompt of
 * the platform's virt-api stand-in, and `d8v restart` returns 0 once the operation completed.
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { waitFor } from '../../../shared/testing/wait.js';
import { npmStart, survivors } from '../platform/fixtures.js';
import { D8V, d8v } from './d8v.js';

const exec = promisify(execFile);
const base = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
let workDir = '';

afterAll(async () => {
  if (workDir !== '' && process.env['VIRT_TESTENV_KEEP'] !== '1') await rm(workDir, { recursive: true, force: true });
});

describe('d8v on the local platform', () => {
  it('console shows the stand-in prompt in tmux and leaves with Ctrl+]; restart returns 0 once Completed', async () => {
    workDir = await mkdtemp(join(base, 'cli-platform-'));
    // With the simulated KubeVirt (its binaries pointed away): this test is about d8v; the demo beside real
    // virt-controller is start.test.ts's (simulated guests) and guests/platform.test.ts's (QEMU guests).
    const platform = npmStart(['--demo', '--work-dir', workDir, '--vm-cidr', '10.78.0.0/16'], { VIRT_TESTENV_KUBEVIRT_DIR: join(workDir, 'no-kubevirt') });
    const socket = `d8v-plat-${randomBytes(3).toString('hex')}`;
    const tmux = (...args: string[]) => exec('tmux', ['-L', socket, ...args]);
    const screen = async (): Promise<string> => (await tmux('capture-pane', '-p', '-t', 'cli')).stdout;
    try {
      // The demo's later steps (pool, evacuation, supersede) act on their own VMs; waiting for the whole
      // demo keeps them off demo-vm. Judged by progress: 84 s alone, several times that in a loaded CI run.
      await platform.line(/demo done: demo\/demo-vm was Running/, 720_000, { stallMs: 200_000 });
      const kubeconfig = join(workDir, 'kubeconfig');

      await tmux(
        'new-session',
        '-d',
        '-s',
        'cli',
        '-x',
        '160',
        '-y',
        '40',
        `${process.execPath} ${D8V} console demo-vm -n demo --kubeconfig ${kubeconfig}; echo "EXIT=$?"; sleep 300`,
      );
      // capture-pane drops trailing blanks: the prompt `demo-vm login: ` shows as `demo-vm login:`.
      await waitFor('the login prompt', async () => (await screen()).includes('demo-vm login:'), { timeoutMs: 60_000, intervalMs: 200 });
      expect(await screen()).toContain('Stand-in Linux (virt-api stand-in of the local platform) ttyS0');
      await tmux('send-keys', '-t', 'cli', 'root', 'Enter');
      await waitFor('the password prompt', async () => /demo-vm login: root\s*\n\s*Password:/.test(await screen()), { intervalMs: 200 });
      await tmux('send-keys', '-t', 'cli', 'C-]');
      await waitFor('d8v to exit', async () => (await screen()).includes('EXIT='), { intervalMs: 200 });
      expect(await screen()).toContain('EXIT=0');

      const restarted = await d8v(['restart', 'demo-vm', '-n', 'demo', '--timeout', '3m'], { kubeconfig });
      expect(restarted.stderr).toMatch(/: Completed (\d+% )?\(OperationCompleted\)\n/);
      expect(restarted.code).toBe(0);
    } catch (err: unknown) {
      throw new Error(`${(err as Error).message}\nterminal:\n${await screen().catch(() => '?')}\nnpm start:\n${platform.tail()}`, { cause: err });
    } finally {
      await tmux('kill-server').catch(() => undefined);
      platform.interrupt();
      await platform.exited;
    }
    expect(survivors(workDir)).toEqual([]);
  }, 900_000);
});
