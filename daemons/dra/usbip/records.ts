/**
 * Attachment records of the import side: which vhci port carries which remote device, for whom. One
 * versioned JSON file (mode 0600 in a 0700 dir), rewritten atomically (temp file, fsync, rename,
 * fsync of the dir), so a crash leaves the old or the new file, never half of one. A file that does
 * not parse is moved aside (`.corrupt-<time>`) and named in the error log, never silently reused.
 */
import { mkdir, readFile, rename } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import { writeFileAtomic } from '../state/atomic-file.js';

export const AttachmentRecordSchema = z.object({
  /** Caller's key: the DRA device name (one attachment per device on this node). */
  key: z.string().min(1),
  port: z.number().int().min(0),
  hub: z.enum(['hs', 'ss']),
  /** Bus id of the device on this node once attached (`7-1`); empty until the kernel reports it. */
  localBusId: z.string(),
  remote: z.object({ host: z.string().min(1), port: z.number().int().min(1).max(65535), busId: z.string().min(1), node: z.string().optional() }),
  devid: z.number().int().min(0),
  speed: z.number().int().min(0),
  attachedAt: z.string(),
});
export type AttachmentRecord = z.infer<typeof AttachmentRecordSchema>;

const FileSchema = z.object({ version: z.literal(1), entries: z.array(AttachmentRecordSchema) });

export class RecordsCorruptError extends Error {
  constructor(
    readonly path: string,
    readonly movedTo: string,
    options: { cause: unknown },
  ) {
    super(`attachment records ${path} unreadable; moved to ${movedTo}`, options);
    this.name = 'RecordsCorruptError';
  }
}

export class AttachmentStore {
  private entries: AttachmentRecord[] = [];

  constructor(readonly path: string) {}

  /** Read the file (a missing file is an empty list). Throws RecordsCorruptError after moving a bad file aside. */
  async load(): Promise<AttachmentRecord[]> {
    await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err: unknown) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      this.entries = [];
      return [];
    }
    try {
      this.entries = FileSchema.parse(JSON.parse(text)).entries;
    } catch (err: unknown) {
      const movedTo = `${this.path}.corrupt-${Date.now()}`;
      await rename(this.path, movedTo);
      this.entries = [];
      throw new RecordsCorruptError(this.path, movedTo, { cause: err });
    }
    return this.list();
  }

  list(): AttachmentRecord[] {
    return this.entries.map((e) => ({ ...e, remote: { ...e.remote } }));
  }

  get(key: string): AttachmentRecord | undefined {
    return this.list().find((e) => e.key === key);
  }

  async put(record: AttachmentRecord): Promise<void> {
    await this.save([...this.entries.filter((e) => e.key !== record.key), AttachmentRecordSchema.parse(record)]);
  }

  async remove(key: string): Promise<void> {
    await this.save(this.entries.filter((e) => e.key !== key));
  }

  /** Keep only the entries `keep` accepts (one write). */
  async retain(keep: (record: AttachmentRecord) => boolean): Promise<AttachmentRecord[]> {
    const dropped = this.entries.filter((e) => !keep(e));
    if (dropped.length > 0) await this.save(this.entries.filter(keep));
    return dropped;
  }

  private async save(entries: AttachmentRecord[]): Promise<void> {
    await writeFileAtomic(this.path, `${JSON.stringify({ version: 1, entries }, null, 2)}\n`, { mode: 0o600, dirMode: 0o700 });
    this.entries = entries;
  }
}
