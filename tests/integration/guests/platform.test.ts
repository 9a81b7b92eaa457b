/**
 * `npm start` with real guests beside real KubeVirt (virt-controller, virt-api), as a user meets it: the demo imports the bootable guest disk over
 * HTTP into DVCR, fills a VirtualDisk from it and boots the VM from that disk on a QEMU process. The
 * user then reads the login prompt with `d8v console` (through the apiserver, our subresources API and
 * the virt-api stand-in to the guest's serial console), runs a command in the guest with `d8v ssh`
 * (the system ssh through `d8v port-forward --stdio` to the guest's dropbear; a port nothing listens on
 * ends in ssh's own error), sees a non-blank screen through `d8v vnc`, lets the VM be stopped (runPolicy
 * AlwaysOnUnlessStoppedManually) and stops it with `d8v stop`, and the QEMU process is gone. Fails, saying so, where QEMU is not installed (npm test installs it).
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeClient } from '../../../shared/kube/index.js';
import { rootLogger } from '../../../shared/log/index.js';
import { waitFor } from '../../../shared/testing/wait.js';
import { freePort } from '../../env/index.js';
import { npmStart, REPO, type StartRun } from '../platform/fixtures.js';
import { rfbFrame } from './rfb-frame.js';
import { requireQemu } from './qemu.js';

await requireQemu();
const D8V = join(REPO, 'shared/cli/d8v.js');
const log = rootLogger.child({ component: 'guests-platform-test' });
const DEMO_VM_PATH = '/apis/virtualization.deckhouse.io/v1alpha2/namespaces/demo/virtualmachines/demo-vm';

/** The pids of QEMU processes running the guest of VM `<ns>/<name>` (their `-name guest=` argument). */
function qemuPidsOf(vm: string): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        return readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0').includes(`guest=${vm}`);
      } catch {
        return false;
      }
    })
    .map(Number);
}

/**
 * For a failure's message: the end of what each QEMU process of the VM (`<namespace>_<name>`, the
 * source's and a migration target's directory) wrote on its serial console, as QEMU logged it, so a
 * console that stays silent tells a guest that printed nothing from a relay that lost its bytes.
 */
function guestSerialLogs(workDir: string, prefix: string): string {
  const root = join(workDir, 'guests');
  let dirs: string[];
  try {
    dirs = readdirSync(root).filter((d) => d.startsWith(prefix));
  } catch (err) {
    return `no guest directory under ${root} (${String(err)})`;
  }
  return dirs
    .map((d) => {
      let tail: string;
      try {
        tail = JSON.stringify(readFileSync(join(root, d, 'serial.log'), 'utf8').slice(-400));
      } catch (err) {
        tail = `(no serial log: ${String(err)})`;
      }
      return `${d}/serial.log ends ${tail}`;
    })
    .join('; ');
}

/**
 * Run `d8v ARGS...` to its end; its exit code and what it printed on each stream. One that has not
 * ended after `hungMs` (a session that hangs, as ssh does when its bytes come back to it) is killed and
 * fails the test with what it printed.
 */
async function d8v(args: readonly string[], hungMs = 180_000): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, [D8V, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (err += s));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<'hung'>((resolve) => (timer = setTimeout(() => resolve('hung'), hungMs)));
  const code = await Promise.race([exited, hung]).finally(() => clearTimeout(timer));
  if (code === 'hung') {
    child.kill('SIGKILL');
    throw new Error(
      `d8v ${args.join(' ')} had not ended after ${hungMs / 1000} s; it printed ${JSON.stringify(out.slice(-300))}, on stderr ${JSON.stringify(err.slice(-300))}`,
    );
  }
  return { code, out, err };
}

describe('npm start with real QEMU guests', () => {
  let run: StartRun | undefined;
  let workDir = '';
  let closeKube = (): void => undefined;
  afterAll(async () => {
    closeKube();
    run?.interrupt();
    await run?.exited;
    if (workDir !== '') await rm(workDir, { recursive: true, force: true });
  }, 120_000);

  test('the demo VM boots the imported disk on QEMU; d8v console shows its login prompt, d8v ssh runs a command in it, d8v vnc shows its screen; d8v stop leaves no QEMU process', async () => {
    workDir = await mkdtemp(join(tmpdir(), 'guests-platform-'));
    // As a user gets it here: real virt-controller and virt-api (the test environment built them), the
    // simulator only as node agent, the guests real: the demo's Restart and Migrate are real KubeVirt
    // objects moving a QEMU guest (a live migration between two QEMU processes).
    run = npmStart(['--demo', '--guests', 'qemu', '--plain', '--work-dir', workDir]);
    const kubeconfig = (await run.line(/export KUBECONFIG=/, 300_000)).replace(/^.*export KUBECONFIG=/, '').trim();
    const kube = KubeClient.fromSource({ kubeconfigPath: kubeconfig });
    closeKube = () => kube.close();
    await run.line(/is a real QEMU guest: its agent answers/, 480_000).catch((err: unknown) => {
      throw new Error(`no real guest in the demo:\n${run?.tail(60) ?? ''}`, { cause: err });
    });
    expect(qemuPidsOf('demo/demo-vm')).toHaveLength(1);
    expect(run.lines.find((l) => l.includes('KubeVirt:'))).toMatch(/KubeVirt: REAL virt-controller and virt-api/);
    // Restarted and live-migrated by real virt-controller: one QEMU process again, the target's.
    expect(await run.line(/^.*demo done:/, 480_000)).toMatch(/then restarted and migrated to node-\d+/);
    await waitFor('one QEMU process after the migration (the source exited)', () => qemuPidsOf('demo/demo-vm').length === 1, { timeoutMs: 60_000 });
    // The demo migrates as soon as the restarted instance runs, so its guest may still be booting (on
    // TCG, beside a busy machine, as long as the first boot): its agent answering again (AgentReady)
    // says it has reached its login prompt.
    await waitFor(
      'the restarted guest to boot again (AgentReady)',
      async () => {
        const vm = (await kube.rest.request({ method: 'GET', path: DEMO_VM_PATH, what: 'get the demo VM' })) as {
          status?: { conditions?: { type: string; status: string }[] };
        };
        return vm.status?.conditions?.some((c) => c.type === 'AgentReady' && c.status === 'True');
      },
      { timeoutMs: 300_000, intervalMs: 1000 },
    );

    // d8v console: Enter until the guest's getty answers.
    const started = Date.now();
    const console = spawn(process.execPath, [D8V, 'console', 'demo-vm', '-n', 'demo', '--kubeconfig', kubeconfig], { stdio: ['pipe', 'pipe', 'pipe'] });
    let text = '';
    console.stdout.setEncoding('utf8').on('data', (s: string) => (text += s));
    console.stderr.setEncoding('utf8').on('data', (s: string) => (text += s));
    const consoleExit = new Promise<number | null>((resolve) => console.once('exit', resolve));
    await waitFor(
      'd8v console to show the login prompt',
      () => {
        if (/d8v-demo login: /.test(text)) return true;
        console.stdin.write('\r');
        return undefined;
      },
      { timeoutMs: 120_000, intervalMs: 1000 },
    ).catch((err: unknown) => {
      throw new Error(`d8v console showed: ${JSON.stringify(text.slice(-500))}; ${guestSerialLogs(workDir, 'demo_demo-vm')}\n${run?.tail(40) ?? ''}`, {
        cause: err,
      });
    });
    log.info({ ms: Date.now() - started }, 'd8v console: login prompt');
    console.stdin.write('\x1d'); // Ctrl+] leaves
    expect(await consoleExit).toBe(0);

    // d8v ssh: root (no password, as on the console) runs a command in the guest; the guest's dropbear
    // makes its host key at this first connection.
    const noHostKeyFile = ['-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null', '-o', 'BatchMode=yes'];
    const sshStarted = Date.now();
    const ssh = await d8v(['ssh', 'root@demo-vm', '-n', 'demo', '--kubeconfig', kubeconfig, ...noHostKeyFile, '--', 'cat /etc/hostname; echo sum=$((40+2))']);
    log.info({ ms: Date.now() - sshStarted }, 'd8v ssh: a command in the guest');
    expect({ code: ssh.code, out: ssh.out, err: ssh.code === 0 ? '' : ssh.err }).toEqual({ code: 0, out: 'd8v-demo\nsum=42\n', err: '' });
    // A port nothing listens on in the guest: ssh's own error (255), and the platform serves on.
    const closed = await d8v(['ssh', 'root@demo-vm', '-n', 'demo', '--kubeconfig', kubeconfig, '-p', '2200', ...noHostKeyFile, '--', 'true']);
    expect({ code: closed.code, out: closed.out }).toEqual({ code: 255, out: '' });
    expect(closed.err).not.toBe('');

    // d8v vnc on a local port, a viewer's first frame through it.
    const port = await freePort();
    const vnc = spawn(process.execPath, [D8V, 'vnc', 'demo-vm', '-n', 'demo', '--port', String(port), '--kubeconfig', kubeconfig], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let vncOut = '';
    vnc.stdout.setEncoding('utf8').on('data', (s: string) => (vncOut += s));
    try {
      await waitFor('d8v vnc to listen', () => vncOut.includes(String(port)), { timeoutMs: 30_000 });
      const socket = createConnection(port, '127.0.0.1');
      let got = Buffer.alloc(0);
      socket.on('data', (b: Buffer) => (got = Buffer.concat([got, b])));
      try {
        const frame = await rfbFrame({ send: (b) => socket.write(b), received: () => got });
        expect(frame.width).toBeGreaterThanOrEqual(640);
        expect(frame.distinctPixels).toBeGreaterThan(1);
      } finally {
        socket.destroy();
      }
    } finally {
      vnc.kill('SIGINT');
    }

    // d8v stop (after the user lets the VM be stopped: Stop is not applicable under runPolicy AlwaysOn):
    // the guest powers down and its QEMU process is gone.
    await kube.rest.request({
      method: 'PATCH',
      path: DEMO_VM_PATH,
      what: 'let the demo VM be stopped',
      body: { spec: { runPolicy: 'AlwaysOnUnlessStoppedManually' } },
      contentType: 'application/merge-patch+json',
    });
    const [pid] = qemuPidsOf('demo/demo-vm');
    const stop = await d8v(['stop', 'demo-vm', '-n', 'demo', '--kubeconfig', kubeconfig]);
    expect({ code: stop.code, said: stop.code === 0 ? '' : stop.out + stop.err }).toEqual({ code: 0, said: '' });
    await waitFor('the QEMU process gone', () => !qemuPidsOf('demo/demo-vm').includes(pid ?? 0), { timeoutMs: 60_000 });
    expect(qemuPidsOf('demo/demo-vm')).toEqual([]);
  }, 900_000);
});
