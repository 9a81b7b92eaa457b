/**
 * kubelet's part for a Secret volume: keep DIR/<key> equal to the Secret's data, switched atomically
 * the way a mounted Secret is (a versioned directory `..vN` behind a `..data` symlink, and one
 * `<key> → ..data/<key>` symlink per key). A missing Secret leaves the files dangling until it
 * exists, as a pod started before its optional Secret waits for it.
 */
import { mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { NotFoundError } from '../shared/errors/index.js';
import type { KubeClient } from '../shared/kube/index.js';

export interface SecretFilesOptions {
  kube: KubeClient;
  namespace: string;
  name: string;
  /** The keys that get a file. Default tls.crt, tls.key, ca.crt. */
  keys?: readonly string[];
  /** How often the Secret is read. Default 1 s (kubelet: about a minute). */
  intervalMs?: number;
}

export class SecretFiles {
  private last = '';
  private version = 0;
  private timer: NodeJS.Timeout | undefined;
  private busy = false;
  private readonly keys: readonly string[];

  constructor(
    readonly dir: string,
    private readonly opts: SecretFilesOptions,
  ) {
    this.keys = opts.keys ?? ['tls.crt', 'tls.key', 'ca.crt'];
  }

  /** The path the unit reads `key` from. */
  path(key: string): string {
    return join(this.dir, key);
  }

  async start(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    for (const key of this.keys) await symlink(`..data/${key}`, this.path(key));
    await this.sync().catch(() => undefined);
    this.timer = setInterval(() => void this.tick(), this.opts.intervalMs ?? 1000);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async tick(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      await this.sync();
    } catch {
      // The next tick tries again, as kubelet does.
    } finally {
      this.busy = false;
    }
  }

  /** Read the Secret once and switch the files if its data changed; false when it does not exist yet. */
  async sync(): Promise<boolean> {
    let data: Record<string, string>;
    try {
      const secret = (await this.opts.kube.rest.request({
        method: 'GET',
        path: `/api/v1/namespaces/${this.opts.namespace}/secrets/${this.opts.name}`,
        what: `get Secret ${this.opts.namespace}/${this.opts.name}`,
      })) as { data?: Record<string, string> };
      data = secret.data ?? {};
    } catch (err: unknown) {
      if (err instanceof NotFoundError) return false;
      throw err;
    }
    const content = this.keys.map((k) => data[k] ?? '').join('\n');
    if (content === this.last) return true;
    const previous = this.version;
    const versioned = join(this.dir, `..v${++this.version}`);
    await mkdir(versioned);
    for (const key of this.keys) await writeFile(join(versioned, key), Buffer.from(data[key] ?? '', 'base64'));
    await rm(join(this.dir, '..data_tmp'), { force: true });
    await symlink(`..v${this.version}`, join(this.dir, '..data_tmp'));
    await rename(join(this.dir, '..data_tmp'), join(this.dir, '..data'));
    if (previous > 0) await rm(join(this.dir, `..v${previous}`), { recursive: true, force: true });
    this.last = content;
    return true;
  }
}
