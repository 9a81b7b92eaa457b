/**
 * qemu-img (Debian's qemu-utils), always told the format with `-f` (never probing): `info` for the
 * virtual size and backing file, `check` for consistency (a truncated qcow2 passes `info` but not
 * `check`), `convert` to the destination format. Failures become ImportErrors naming the problem.
 */
import { execFile } from 'node:child_process';
import { ImportError } from './errors.js';
import type { DiskFormat } from './format.js';

export interface ImageInfo {
  readonly virtualSize: number;
  readonly backingFile?: string | undefined;
}

interface RunResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function run(args: readonly string[], signal?: AbortSignal): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    execFile('qemu-img', [...args], { maxBuffer: 16 << 20, signal }, (err, stdout, stderr) => {
      if (err !== null && typeof err.code !== 'number') {
        reject(
          signal?.aborted === true
            ? new ImportError('Interrupted', 'the import was interrupted')
            : new ImportError('InternalError', `cannot run qemu-img: ${err.message}`, { cause: err }),
        );
        return;
      }
      resolve({ code: err === null ? 0 : Number(err.code), stdout, stderr });
    });
  });
}

/** The first line of qemu-img's complaint, without its program prefix. */
function firstError(stderr: string): string {
  const line = stderr.split('\n').find((l) => l.trim() !== '') ?? 'no reason given';
  return line.replace(/^qemu-img: /, '').trim();
}

export async function imageInfo(path: string, format: DiskFormat, signal?: AbortSignal): Promise<ImageInfo> {
  const qemuFormat = format === 'iso' ? 'raw' : format;
  const res = await run(['info', '--output=json', '-f', qemuFormat, path], signal);
  if (res.code !== 0) throw new ImportError('CorruptImage', `the ${format} image cannot be read: ${firstError(res.stderr)}`);
  const info = JSON.parse(res.stdout) as { 'virtual-size'?: number; 'backing-filename'?: string; 'full-backing-filename'?: string };
  if (typeof info['virtual-size'] !== 'number') throw new ImportError('CorruptImage', `qemu-img reports no virtual size for the ${format} image`);
  return { virtualSize: info['virtual-size'], backingFile: info['full-backing-filename'] ?? info['backing-filename'] };
}

/** Exit codes of `qemu-img check`: 0 clean, 1 check failed, 2 corrupted, 3 leaks only, 63 format has no check. */
export async function checkImage(path: string, format: DiskFormat, signal?: AbortSignal): Promise<void> {
  if (format === 'raw' || format === 'iso') return;
  const res = await run(['check', '--output=json', '-f', format, path], signal);
  if (res.code === 0 || res.code === 3 || res.code === 63) return;
  let corruptions: number | undefined;
  try {
    corruptions = (JSON.parse(res.stdout) as { corruptions?: number }).corruptions;
  } catch {
    corruptions = undefined;
  }
  const truncated = /exceeding the end of the file/.test(res.stderr);
  const what = truncated
    ? 'is truncated (it refers to data past its end)'
    : corruptions !== undefined
      ? `has ${corruptions} corruptions`
      : `failed the consistency check (${firstError(res.stderr)})`;
  throw new ImportError('CorruptImage', `the ${format} image ${what}`);
}

export async function convertImage(from: string, fromFormat: DiskFormat, to: string, toFormat: 'raw' | 'qcow2', signal?: AbortSignal): Promise<void> {
  const qemuFormat = fromFormat === 'iso' ? 'raw' : fromFormat;
  // -t none -T none would bypass the page cache; writeback (the default) is faster for files.
  const res = await run(['convert', '-f', qemuFormat, '-O', toFormat, from, to], signal);
  if (res.code !== 0) throw new ImportError('CorruptImage', `converting the ${fromFormat} image to ${toFormat} failed: ${firstError(res.stderr)}`);
}
