/**
 * `npm start`: the composition root of the local platform. Flags once; the platform started; the demo
 * and the live view; Ctrl-C (SIGINT), SIGTERM or SIGHUP stop everything in order. A unit or control
 * plane process that dies is named with its log file, the rest is stopped, and the exit code is 1.
 * Exit codes: 0 after a signal or a successful demo with --exit-after-demo, 1 a failure, 2 bad flags.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { errorMessage } from '../shared/errors/index.js';
import { ensureBinaries } from '../tests/env/binaries.js';
import { LiveView } from './demo/live.js';
import { DEMO_NAMESPACE, DEMO_VM, OPERATOR, VIEWER } from './demo/objects.js';
import { runDemo } from './demo/run-demo.js';
import { snapshot } from './demo/snapshot.js';
import { FlagError, HELP, parseFlags, type PlatformFlags } from './flags.js';
import { Platform, type RunningPlatform } from './platform.js';
import type { Crash } from './supervisor.js';
import { earlierWorkDirs, stopLeftovers } from './leftovers.js';
import { BUNDLE_ROOT, REPO_ROOT } from './units.js';
import { findQemu } from './simulators/kubevirt-simulator/qemu/backend.js';

const out = process.stdout;
// A terminal that went away (SIGHUP, a closed tmux pane) must not stop the shutdown halfway: writes
// that fail are dropped.
out.on('error', () => undefined);
let t0 = Date.now();
/** A status line, with the seconds since `npm start`. */
const say = (line: string): void => {
  try {
    out.write(`[${((Date.now() - t0) / 1000).toFixed(1).padStart(6)} s] ${line}\n`);
  } catch {
    // the terminal is gone
  }
};

class Stopped extends Error {
  constructor(readonly signal: string) {
    super(`stopped by ${signal}`);
  }
}

class Crashed extends Error {
  constructor(readonly crash: Crash) {
    super(`${crash.name} exited unexpectedly (exit ${String(crash.exit)}); its log: ${crash.logPath}`);
  }
}

/** On the local platform with real guests (--guests, QEMU installed): the bootable demo disk, built from Debian packages at first use and cached. */
async function demoGuestImage(local: boolean, flags: PlatformFlags, say: (line: string) => void): Promise<string | undefined> {
  if (!local || flags.guests === 'simulated' || (await findQemu()) === undefined) return undefined;
  say('real guests: the demo VM boots the demo guest disk on QEMU (tests/env/build-guest-image.sh, cached)');
  const { stdout } = await promisify(execFile)('bash', [join(REPO_ROOT, 'tests/env/build-guest-image.sh')], { encoding: 'utf8' });
  return join(stdout.trim(), 'disk.img');
}

async function workDirFor(flags: PlatformFlags): Promise<string> {
  if (flags.workDir !== undefined) {
    await mkdir(flags.workDir, { recursive: true });
    return flags.workDir;
  }
  const base = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
  return mkdtemp(join(base, 'virt-platform-'));
}

async function main(argv: readonly string[]): Promise<number> {
  t0 = Number(process.env['VIRT_PLATFORM_T0'] ?? '') || Date.now();
  let flags: PlatformFlags;
  try {
    flags = parseFlags(argv);
  } catch (err: unknown) {
    if (!(err instanceof FlagError)) throw err;
    process.stderr.write(`${err.message}\n`);
    return 2;
  }
  if (flags.help) {
    out.write(HELP);
    return 0;
  }
  const local = flags.kubeconfig === undefined;
  const demo = flags.demo ?? local;
  const tty = flags.plain !== true && out.isTTY;

  const binDir = await ensureBinaries();
  const bases = [...new Set([existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), tmpdir()])];
  for (const left of await stopLeftovers(earlierWorkDirs(bases, flags.workDir !== undefined ? [flags.workDir] : []), BUNDLE_ROOT)) {
    say(`stopped ${left}, left running by a platform that was killed`);
  }
  const workDir = await workDirFor(flags);
  const platform = new Platform({ flags, binDir, workDir, say });

  // Whatever ends the run: a signal, a crashed process, or the end of the demo.
  let interrupt: (err: Error) => void = () => undefined;
  const interrupted = new Promise<never>((_resolve, reject) => (interrupt = reject));
  interrupted.catch(() => undefined);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(sig, () => {
      if (stopping) {
        say(`${sig} again: killing what is left`);
        platform.supervisor.killAll();
        return;
      }
      interrupt(new Stopped(sig));
    });
  }
  void platform.supervisor.crashed.then((c) => interrupt(new Crashed(c)));
  // A defect of the platform itself must not leave its children (process groups of their own) behind.
  process.on('uncaughtException', (err) => {
    process.stderr.write(`npm start: ${errorMessage(err)}; killing every child\n`);
    platform.supervisor.killAll();
    process.exit(1);
  });

  let stopping = false;
  let view: LiveView | undefined;
  let code = 0;
  let running: RunningPlatform | undefined;
  try {
    say(`virtualization module, local platform (work dir ${workDir})`);
    running = await Promise.race([platform.start(), interrupted]);
    const ready = running;
    say(`platform ready in ${((Date.now() - t0) / 1000).toFixed(1)} s: export KUBECONFIG=${ready.adminKubeconfig}`);
    view = new LiveView({
      out,
      tty,
      t0,
      read: () => snapshot(ready.admin, ready.auditLog),
      header: () => ({
        server: ready.server,
        kubeconfig: ready.adminKubeconfig,
        logDir: workDir,
        uptimeMs: Date.now() - t0,
        units: Object.fromEntries(Object.entries(ready.units).map(([n, p]) => [n, !p.hasExited()])),
        ...(ready.kubevirt !== undefined ? { kubevirt: ready.kubevirt } : {}),
      }),
    });
    view.start();
    if (demo) {
      const [operator, viewer] = await Promise.all([ready.userKubectl(OPERATOR.name), ready.userKubectl(VIEWER.name)]);
      const result = await Promise.race([
        runDemo({
          admin: ready.admin,
          kubectl: { admin: ready.kubectl, operator, viewer },
          auditLog: ready.local ? ready.auditLog : undefined,
          say: (l) => view?.step(l),
          t0,
          // The local platform's importer pods run on this machine and reach a loopback server.
          imageDir: ready.local ? join(workDir, 'demo-image') : undefined,
          guestImage: await demoGuestImage(ready.local, flags, say),
          d8vKubeconfig: ready.adminKubeconfig,
        }),
        interrupted,
      ]);
      view.step(
        `demo done: ${DEMO_NAMESPACE}/${DEMO_VM} was Running ${(result.vmRunningAfterMs / 1000).toFixed(1)} s after npm start, then restarted and migrated to ${result.migratedTo}`,
      );
      say(`time from npm start to the demo VM Running: ${(result.vmRunningAfterMs / 1000).toFixed(1)} s`);
    }
    if (flags.exitAfterDemo) {
      stopping = true;
    } else {
      view.step('the platform keeps running: kubectl with the KUBECONFIG above; Ctrl-C stops everything');
      await interrupted;
    }
  } catch (err: unknown) {
    stopping = true;
    await view?.stop();
    view = undefined;
    if (err instanceof Stopped) {
      say(`${err.signal}: stopping`);
    } else if (err instanceof Crashed) {
      say(`FAILED: ${err.message}`);
      code = 1;
    } else {
      say(`FAILED: ${errorMessage(err)}`);
      code = 1;
    }
  }
  stopping = true;
  await view?.stop();
  await platform.stop((name) => say(`  stopping ${name}`));
  // A failure keeps the logs; a failure before anything started has none to keep.
  const keep = flags.keep || flags.workDir !== undefined || (code !== 0 && platform.supervisor.startedAny());
  if (keep) say(`stopped; logs and state kept in ${workDir}`);
  else {
    await rm(workDir, { recursive: true, force: true });
    say('stopped; work dir removed');
  }
  return code;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`npm start failed: ${errorMessage(err)}\n`);
    process.exit(1);
  },
);
