/**
 * The `d8v` command line (commander): every command, its options and help, and the mapping of
 * whatever a command throws to an exit code. `run()` never exits the process, so tests call it.
 */
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { parseDurationMs } from '../config/index.js';
import { errorMessage } from '../errors/index.js';
import { connect, type Connection, type GlobalOptions } from './connection.js';
import { runConsole } from './console.js';
import { ExitCode, UsageError, exitCodeOf } from './exit-codes.js';
import { forwardStdio, parsePortMapping, serveListeners, validPort, type Listener } from './forward.js';
import type { Io } from './io.js';
import { runOperation, type OperationType } from './operations.js';
import { commonArgs, parseSshTarget, proxyCommand, runTool, scpPaths, sshArgs, type SshOptions } from './ssh.js';
import { VOLUME_KINDS, addVolume, freeze, removeVolume, scaleDownWith, unfreeze } from './subresources.js';

export interface RunOptions {
  /** Aborted on Ctrl-C / SIGTERM: waits stop, sessions close, listeners stop. */
  signal: AbortSignal;
  /** How to run this CLI again (node, its flags and the script), for ssh's ProxyCommand. */
  self: readonly string[];
  /** Pause between two reads of an operation while waiting (tests shorten it). */
  pollMs?: number;
}

const EXIT_CODES_HELP = `
Exit codes:
  0    done (operation Completed, session ended normally, port-forward/vnc stopped with Ctrl-C)
  1    the operation failed, was superseded, or the server refused the request (e.g. 400, 409, 422)
  2    usage: bad arguments, options or kubeconfig
  3    the VirtualMachine (or namespace) was not found
  4    not authenticated (401) or not allowed (403)
  5    the cluster or the VM's backend is unavailable (unreachable, 5xx, stream lost)
  6    --timeout passed before the operation finished (it goes on in the cluster)
  130  interrupted (Ctrl-C) before finishing
  ssh and scp exit with the code of the system's ssh/scp (255: ssh's own error).`;

function duration(text: string): number {
  const ms = parseDurationMs(text);
  if (ms === undefined || ms <= 0) throw new InvalidArgumentError('expected a duration such as 30s, 5m or 1h30m.');
  return ms;
}

function port(text: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || !validPort(n)) throw new InvalidArgumentError('expected a port 1-65535.');
  return n;
}

function localPort(text: string): number {
  return text === '0' ? 0 : port(text);
}

function keyValue(text: string, previous: Record<string, string> = {}): Record<string, string> {
  const at = text.indexOf('=');
  if (at <= 0) throw new InvalidArgumentError('expected KEY=VALUE.');
  return { ...previous, [text.slice(0, at)]: text.slice(at + 1) };
}

const collect = (text: string, previous: string[] = []): string[] => [...previous, text];

/** Run one command line (without `node` and the script); resolves with the exit code. */
export async function run(argv: readonly string[], io: Io, opts: RunOptions): Promise<number> {
  let exitCode: number = ExitCode.ok;
  const { signal } = opts;

  /** Connect with the global options, run `body`, close the connection. */
  const withConnection = async (cmd: Command, body: (conn: Connection, global: GlobalOptions) => Promise<number | void>): Promise<void> => {
    const global = cmd.optsWithGlobals<GlobalOptions>();
    const conn = connect(global);
    try {
      exitCode = (await body(conn, global)) ?? ExitCode.ok;
    } finally {
      conn.close();
    }
  };

  const program = new Command('d8v')
    .description('Work with virtual machines (virtualization.deckhouse.io) using your kubeconfig.')
    .option('-n, --namespace <namespace>', "the VM's namespace (default: the context's, else default)")
    .option('--kubeconfig <path>', 'kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)')
    .option('--context <name>', 'kubeconfig context (default: the current context)')
    .configureHelp({ showGlobalOptions: true })
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) })
    .exitOverride()
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText('after', EXIT_CODES_HELP);

  // start / stop / restart / migrate: VirtualMachineOperations.
  const operation = (name: string, summary: string, forceHelp?: string): Command => {
    const cmd = program
      .command(name)
      .summary(`${summary} (VirtualMachineOperation)`)
      .description(`${summary} through a VirtualMachineOperation; waits until it is Completed or Failed, printing its progress.`)
      .argument('<vm>', 'VirtualMachine name')
      .option('--no-wait', 'create the operation and return at once')
      .addOption(new Option('--timeout <duration>', 'give up waiting after this long (exit 6)').default(300_000, '5m').argParser(duration));
    if (forceHelp !== undefined) cmd.option('--force', forceHelp, false);
    return cmd;
  };
  const operationAction =
    (type: OperationType) => async (vm: string, o: { wait: boolean; timeout: number; force?: boolean; nodeSelector?: Record<string, string> }, cmd: Command) =>
      withConnection(cmd, (conn) =>
        runOperation(
          conn,
          { type, vm, force: o.force === true, nodeSelector: o.nodeSelector, wait: o.wait, timeoutMs: o.timeout, pollMs: opts.pollMs },
          io,
          signal,
        ),
      );
  operation('start', 'Start a stopped VM').action(operationAction('Start'));
  operation('stop', 'Stop a VM', 'power off at once instead of a guest shutdown').action(operationAction('Stop'));
  operation('restart', 'Restart a VM', 'power off and start again instead of a guest reboot').action(operationAction('Restart'));
  operation('migrate', 'Live-migrate a VM to another node', 'override the live migration policy (auto-converge)')
    .option('--node-selector <key=value>', 'labels the target node must have (repeatable)', keyValue)
    .action(operationAction('Migrate'));

  // Sessions over WebSocket.
  program
    .command('console')
    .description("Connect this terminal to the VM's serial console (Ctrl+] leaves).")
    .argument('<vm>', 'VirtualMachine name')
    .action((vm: string, _o: unknown, cmd: Command) => withConnection(cmd, (conn) => runConsole(conn, vm, io, signal)));

  program
    .command('vnc')
    .description("Serve the VM's VNC screen on a local port for a VNC viewer (until Ctrl-C).")
    .argument('<vm>', 'VirtualMachine name')
    .option('--address <ip>', 'local address to listen on', '127.0.0.1')
    .addOption(new Option('--port <port>', 'local port (0: any free port, printed)').default(0).argParser(localPort))
    .action((vm: string, o: { address: string; port: number }, cmd: Command) =>
      withConnection(cmd, async (conn) => {
        const listener: Listener = { target: { vm, kind: 'vnc' }, local: o.port, label: `VNC of VirtualMachine ${conn.namespace}/${vm}` };
        await serveListeners(conn, [listener], o.address, io, signal);
      }),
    );

  program
    .command('port-forward')
    .description('Forward local ports to ports of the VM (TCP), until Ctrl-C; or one port on stdin/stdout with --stdio.')
    .argument('<vm>', 'VirtualMachine name')
    .argument('<ports...>', 'REMOTE, LOCAL:REMOTE or :REMOTE (any free local port)')
    .option('--address <ip>', 'local address to listen on', '127.0.0.1')
    .option('--stdio', 'carry one connection to the single REMOTE port on stdin/stdout (for ssh ProxyCommand)', false)
    .action((vm: string, ports: string[], o: { address: string; stdio: boolean }, cmd: Command) => {
      const mappings = ports.map(parsePortMapping);
      if (o.stdio && mappings.length !== 1) throw new UsageError('--stdio takes exactly one REMOTE port');
      return withConnection(cmd, async (conn) => {
        const target = (remote: number) => ({ vm, kind: 'portforward' as const, query: { port: remote, protocol: 'tcp' } });
        if (o.stdio) return forwardStdio(conn, target(mappings[0]?.remote ?? 0), io, signal);
        const listeners = mappings.map((m) => ({ target: target(m.remote), local: m.local, label: `VirtualMachine ${conn.namespace}/${vm} port ${m.remote}` }));
        return serveListeners(conn, listeners, o.address, io, signal);
      });
    });

  const sshOptions = (cmd: Command): Command =>
    cmd
      .addOption(new Option('-p, --port <port>', "the VM's SSH port").default(22).argParser(port))
      .option('-i, --identity-file <path>', 'private key for ssh')
      .option('-o, --ssh-option <KEY=VALUE>', 'an option for ssh/scp, as ssh -o (repeatable)', collect);
  const sshOpts = (o: { port: number; identityFile?: string; sshOption?: string[] }): SshOptions => ({
    port: o.port,
    identityFile: o.identityFile,
    options: o.sshOption ?? [],
  });

  sshOptions(program.command('ssh'))
    .description('Run the system ssh to the VM, tunnelled through port-forward (no network path to the VM needed).')
    .argument('<target>', '[USER@]VM')
    .argument('[command...]', 'a command to run instead of a shell (after --)')
    .option('-l, --username <user>', 'user to log in as (or USER@VM)')
    .action((targetText: string, command: string[], o: { port: number; identityFile?: string; sshOption?: string[]; username?: string }, cmd: Command) => {
      const target = parseSshTarget(targetText);
      if (o.username !== undefined) target.user = o.username;
      return withConnection(cmd, async (conn, global) => {
        const proxy = proxyCommand(opts.self, global, conn.namespace, target.vm, o.port);
        return runTool('ssh', sshArgs(proxy, conn.namespace, target, sshOpts(o), command), signal);
      });
    });

  sshOptions(program.command('scp'))
    .description('Copy files to or from a VM with the system scp, tunnelled through port-forward.')
    .argument('<source>', 'local path or [USER@]VM:PATH')
    .argument('<destination>', 'local path or [USER@]VM:PATH')
    .option('-r, --recursive', 'copy directories recursively', false)
    .action((source: string, destination: string, o: { port: number; identityFile?: string; sshOption?: string[]; recursive: boolean }, cmd: Command) =>
      withConnection(cmd, async (conn, global) => {
        const { vm, paths } = scpPaths(conn.namespace, source, destination);
        const proxy = proxyCommand(opts.self, global, conn.namespace, vm, o.port);
        const args = [...commonArgs(proxy, conn.namespace, vm, sshOpts(o)), ...(o.recursive ? ['-r'] : []), '--', ...paths];
        return runTool('scp', args, signal);
      }),
    );

  // Plain subresource calls.
  program
    .command('freeze')
    .description("Freeze the VM's filesystems through the guest agent (before a snapshot).")
    .argument('<vm>', 'VirtualMachine name')
    .addOption(
      new Option('--unfreeze-timeout <duration>', 'the guest thaws itself after this long').default('5m').argParser((text: string) => (duration(text), text)),
    )
    .action((vm: string, o: { unfreezeTimeout: string }, cmd: Command) =>
      withConnection(cmd, async (conn) => {
        await freeze(conn, vm, o.unfreezeTimeout, signal);
        io.stdout.write(`VirtualMachine ${conn.namespace}/${vm} frozen\n`);
      }),
    );
  program
    .command('unfreeze')
    .description("Thaw the VM's filesystems.")
    .argument('<vm>', 'VirtualMachine name')
    .action((vm: string, _o: unknown, cmd: Command) =>
      withConnection(cmd, async (conn) => {
        await unfreeze(conn, vm, signal);
        io.stdout.write(`VirtualMachine ${conn.namespace}/${vm} unfrozen\n`);
      }),
    );
  program
    .command('addvolume')
    .description('Hot-plug a disk or image into a running VM.')
    .argument('<vm>', 'VirtualMachine name')
    .argument('<name>', 'name of the volume (the VirtualDisk or image)')
    .addOption(new Option('--volume-kind <kind>', 'what the volume is').choices(VOLUME_KINDS).default('VirtualDisk'))
    .option('--pvc-name <name>', 'the PersistentVolumeClaim behind the volume (VirtualDisk, or a VirtualImage on a PVC)')
    .option('--image <ref>', 'the container image (ClusterVirtualImage, or a VirtualImage in the registry)')
    .option('--serial <serial>', 'disk serial number seen by the guest')
    .option('--cdrom', 'attach as a CD-ROM', false)
    .action(
      (
        vm: string,
        name: string,
        o: { volumeKind: (typeof VOLUME_KINDS)[number]; pvcName?: string; image?: string; serial?: string; cdrom: boolean },
        cmd: Command,
      ) =>
        withConnection(cmd, async (conn) => {
          await addVolume(conn, vm, { name, volumeKind: o.volumeKind, pvcName: o.pvcName, image: o.image, serial: o.serial, isCdrom: o.cdrom }, signal);
          io.stdout.write(`volume ${name} added to VirtualMachine ${conn.namespace}/${vm}\n`);
        }),
    );
  program
    .command('removevolume')
    .description('Unplug a hot-plugged volume from a VM.')
    .argument('<vm>', 'VirtualMachine name')
    .argument('<name>', 'name of the volume')
    .action((vm: string, name: string, _o: unknown, cmd: Command) =>
      withConnection(cmd, async (conn) => {
        await removeVolume(conn, vm, name, signal);
        io.stdout.write(`volume ${name} removed from VirtualMachine ${conn.namespace}/${vm}\n`);
      }),
    );

  program
    .command('scaledownwith')
    .description('Remove the named VMs from a VirtualMachinePool and lower its replicas by as many (they are not replaced).')
    .argument('<pool>', 'VirtualMachinePool name')
    .argument('<vm...>', 'the member VirtualMachines to remove')
    .option('--dry-run', 'only check that every VM is a member of the pool', false)
    .action((pool: string, vms: string[], o: { dryRun: boolean }, cmd: Command) =>
      withConnection(cmd, async (conn) => {
        await scaleDownWith(conn, pool, vms, o.dryRun, signal);
        io.stdout.write(`${o.dryRun ? 'would remove' : 'removed'} ${vms.join(', ')} from VirtualMachinePool ${conn.namespace}/${pool}\n`);
      }),
    );

  try {
    await program.parseAsync([...argv], { from: 'user' });
    return exitCode;
  } catch (err: unknown) {
    if (err instanceof CommanderError) {
      // commander has already printed the message (or the help).
      return err.code === 'commander.helpDisplayed' || err.code === 'commander.version' ? ExitCode.ok : ExitCode.usage;
    }
    io.stderr.write(`error: ${errorMessage(err)}\n`);
    return exitCodeOf(err);
  }
}
