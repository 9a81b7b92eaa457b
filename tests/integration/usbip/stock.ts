/** The Debian `usbip` client (usbip-utils, installed by tests/env/install-deps.sh), run against a port of 127.0.0.1 or any host. */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface UsbipRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** `usbip --tcp-port <port> <args>`; a failure is returned (its exit code and output), never thrown. */
export async function usbip(port: number, args: readonly string[]): Promise<UsbipRun> {
  try {
    const { stdout, stderr } = await run('usbip', ['--tcp-port', String(port), ...args], { timeout: 30_000 });
    return { code: 0, stdout, stderr };
  } catch (err: unknown) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}
