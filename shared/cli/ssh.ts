/**
 * `d8v ssh` and `d8v scp`: the system's ssh/scp, reaching the VM through `d8v port-forward --stdio`
 * as their ProxyCommand (as virtctl does), so no network path to the VM is needed. The host name ssh
 * sees is `<vm>.<namespace>`, also used as HostKeyAlias so known_hosts keeps one key per VM.
 */
import { spawn } from 'node:child_process';
import { errorMessage } from '../errors/index.js';
import type { GlobalOptions } from './connection.js';
import { InterruptedError, UsageError } from './exit-codes.js';

export interface SshTarget {
  vm: string;
  user?: string | undefined;
}

export interface SshOptions {
  port: number;
  identityFile?: string | undefined;
  /** Extra `-o KEY=VALUE` options for ssh/scp. */
  options: readonly string[];
}

/** `[user@]vm` */
export function parseSshTarget(text: string): SshTarget {
  const at = text.lastIndexOf('@');
  const target = at < 0 ? { vm: text } : { user: text.slice(0, at), vm: text.slice(at + 1) };
  if (target.vm === '' || target.user === '') throw new UsageError(`"${text}" is not [USER@]VM`);
  return target;
}

/** The command line that re-runs this CLI as ssh's ProxyCommand (quoted for the shell ssh uses). */
export function proxyCommand(self: readonly string[], global: GlobalOptions, namespace: string, vm: string, port: number): string {
  const args = [...self, 'port-forward', '--stdio', '-n', namespace];
  if (global.kubeconfig !== undefined) args.push('--kubeconfig', global.kubeconfig);
  if (global.context !== undefined) args.push('--context', global.context);
  args.push(vm, String(port));
  return args.map(shellQuote).join(' ');
}

export function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** ssh/scp options shared by both: the ProxyCommand, the host key alias, identity and extra options. */
export function commonArgs(proxy: string, namespace: string, vm: string, opts: SshOptions): string[] {
  const args = ['-o', `ProxyCommand=${proxy}`, '-o', `HostKeyAlias=vm/${vm}.${namespace}`];
  if (opts.identityFile !== undefined) args.push('-i', opts.identityFile);
  for (const o of opts.options) args.push('-o', o);
  return args;
}

/** `ssh` arguments for a session (or a remote command after `--`). */
export function sshArgs(proxy: string, namespace: string, target: SshTarget, opts: SshOptions, command: readonly string[]): string[] {
  const args = commonArgs(proxy, namespace, target.vm, opts);
  if (target.user !== undefined) args.push('-l', target.user);
  args.push(`${target.vm}.${namespace}`);
  if (command.length > 0) args.push('--', ...command);
  return args;
}

/**
 * Rewrite scp's paths: exactly one of the two names a VM (`[user@]VM:path`), which becomes
 * `[user@]VM.NAMESPACE:path`; the other is local. Returns the VM and the rewritten pair.
 */
export function scpPaths(namespace: string, source: string, destination: string): { vm: string; paths: [string, string] } {
  const remote = (p: string): RegExpExecArray | null => /^((?:[^@:/]+@)?)([^@:/]+):(.*)$/.exec(p);
  const [src, dst] = [remote(source), remote(destination)];
  if ((src === null) === (dst === null)) {
    throw new UsageError('exactly one of SOURCE and DESTINATION must be [USER@]VM:PATH (the other a local path)');
  }
  const m = (src ?? dst) as RegExpExecArray;
  const rewritten = `${m[1]}${m[2]}.${namespace}:${m[3]}`;
  return { vm: m[2] ?? '', paths: src ? [rewritten, destination] : [source, rewritten] };
}

/** Run `program` with the terminal attached; resolves with its exit code. */
export function runTool(program: string, args: readonly string[], signal: AbortSignal): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { stdio: 'inherit' });
    child.once('error', (err) => reject(new UsageError(`cannot run ${program}: ${errorMessage(err)}`, { cause: err })));
    child.once('exit', (code, sig) => {
      if (sig !== null && signal.aborted) reject(new InterruptedError(`${program} interrupted`));
      else resolve(code ?? 1);
    });
  });
}
