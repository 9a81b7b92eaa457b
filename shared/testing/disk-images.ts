/**
 * Disk images made with the real qemu-img (Debian's qemu-utils) and a static HTTP server for them:
 * the importer's and the controller's storage tests, the importer benchmark, and the demo of
 * `npm start` (which serves its image at a limited rate, like a remote mirror, so that the import
 * takes long enough to watch its progress).
 */
import { execFileSync } from 'node:child_process';
import { createReadStream, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Transform, type TransformCallback } from 'node:stream';

/** A raw image of `mib` MiB with `dataKiB` of non-zero data at the start, converted to `format`; the raw source stays beside it as `<name>.src.raw`. */
export function makeImage(dir: string, name: string, format: 'raw' | 'qcow2' | 'vmdk' | 'vdi', mib: number, dataKiB = 256): string {
  const raw = join(dir, `${name}.src.raw`);
  execFileSync('qemu-img', ['create', '-q', '-f', 'raw', raw, `${mib}M`]);
  const data = Buffer.alloc(dataKiB << 10);
  for (let i = 0; i < data.length; i++) data[i] = (i * 7 + 13) & 0xff;
  writeFileSync(raw, data, { flag: 'r+' });
  const out = join(dir, name);
  execFileSync('qemu-img', ['convert', '-q', '-f', 'raw', '-O', format, raw, out]);
  return out;
}

export interface FileServer {
  readonly url: string;
  readonly requests: string[];
  close(): Promise<void>;
}

/**
 * Serve the files of `dir` with Content-Length. `/broken/<file>` announces the whole file and closes
 * the connection after half of it; `/stall/<file>` sends 4 KiB of it and then nothing; `/status/<code>`
 * answers that status. With `bytesPerSecond`, every file is sent at that rate.
 */
export async function serveDir(dir: string, opts: { bytesPerSecond?: number } = {}): Promise<FileServer> {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent((req.url ?? '/').split('?')[0] ?? '/');
    requests.push(path);
    const status = /^\/status\/(\d{3})$/.exec(path);
    if (status) return void res.writeHead(Number(status[1])).end('nope');
    const broken = path.startsWith('/broken/');
    const stall = path.startsWith('/stall/');
    const file = join(dir, broken || stall ? path.slice(path.indexOf('/', 1)) : path);
    let size: number;
    try {
      size = statSync(file).size;
    } catch {
      return void res.writeHead(404).end('not found');
    }
    res.writeHead(200, { 'content-length': size, 'content-type': 'application/octet-stream' });
    if (stall) res.write(Buffer.alloc(4096));
    else if (broken)
      createReadStream(file, { end: Math.floor(size / 2) })
        .on('end', () => res.destroy())
        .pipe(res, { end: false });
    else if (opts.bytesPerSecond !== undefined)
      createReadStream(file, { highWaterMark: 64 << 10 })
        .pipe(throttle(opts.bytesPerSecond))
        .pipe(res);
    else createReadStream(file, { highWaterMark: 1 << 20 }).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Passes chunks on no faster than `bytesPerSecond` (measured from the first chunk). */
function throttle(bytesPerSecond: number): Transform {
  let sent = 0;
  let start = 0;
  return new Transform({
    transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
      if (start === 0) start = Date.now();
      sent += chunk.length;
      const due = start + (sent / bytesPerSecond) * 1000;
      setTimeout(() => done(null, chunk), Math.max(0, due - Date.now()));
    },
  });
}
