/**
 * The prepared claims of this node, checkpointed atomically after every change so that a restarted
 * daemon answers a repeated prepare the same way and still cleans up at unprepare (the original
 * rebuilt this from containerd's NRI instead; see ADR 0012). Versioned: a file of an unknown version or
 * a broken one is moved aside (`.corrupt-<time>`) and reported, never silently reused.
 */
import { readFile, rename, rm } from 'node:fs/promises';
import { z } from 'zod';
import type { Logger } from '../../../shared/log/index.js';
import { writeFileAtomic } from '../state/atomic-file.js';

export const CHECKPOINT_VERSION = 1;

const PreparedDeviceSchema = z.object({
  requestNames: z.array(z.string()),
  poolName: z.string(),
  deviceName: z.string(),
  cdiDeviceIds: z.array(z.string()),
  /** The device's bus id on the node that has it (this node, or `importedFrom`). */
  busId: z.string(),
  usbAddress: z.string(),
  /** Set when the device was imported over USB/IP from this node (its name): unprepare detaches it. */
  importedFrom: z.string().optional(),
});
export type CheckpointDevice = z.infer<typeof PreparedDeviceSchema>;

const PreparedClaimSchema = z.object({ namespace: z.string(), name: z.string(), devices: z.array(PreparedDeviceSchema) });
export type PreparedClaim = z.infer<typeof PreparedClaimSchema>;

const CheckpointSchema = z.object({
  version: z.literal(CHECKPOINT_VERSION),
  claims: z.record(z.string(), PreparedClaimSchema),
});

async function readIfThere(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (err: unknown) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

export class Checkpoint {
  private claims = new Map<string, PreparedClaim>();

  /** `legacyPath`: where an earlier version kept the file; read when `path` has none, then moved here. */
  constructor(
    readonly path: string,
    private readonly log: Logger,
    private readonly legacyPath?: string,
  ) {}

  /** Load the file (or the legacy one); absent is empty, broken or of another version is moved aside and empty. */
  async load(): Promise<void> {
    let source = this.path;
    let text = await readIfThere(this.path);
    if (text === undefined && this.legacyPath !== undefined) {
      source = this.legacyPath;
      text = await readIfThere(source);
    }
    if (text === undefined) return;
    let problem: string;
    try {
      const parsed = CheckpointSchema.safeParse(JSON.parse(text));
      if (parsed.success) {
        this.claims = new Map(Object.entries(parsed.data.claims));
        if (source !== this.path) {
          await this.save();
          await rm(source, { force: true });
          this.log.info(
            { from: source, to: this.path, claims: this.claims.size },
            'moved the checkpoint of prepared claims from where an earlier version kept it',
          );
        }
        return;
      }
      problem = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    } catch (err: unknown) {
      problem = `not JSON: ${(err as Error).message}`;
    }
    const aside = `${source}.corrupt-${Date.now()}`;
    await rename(source, aside);
    this.log.error({ path: source, movedTo: aside, problem }, 'the checkpoint of prepared claims cannot be used; starting without it');
  }

  get(claimUid: string): PreparedClaim | undefined {
    return this.claims.get(claimUid);
  }

  entries(): [string, PreparedClaim][] {
    return [...this.claims.entries()];
  }

  get size(): number {
    return this.claims.size;
  }

  /** The claim that holds a device, if any. */
  holderOf(deviceName: string): string | undefined {
    for (const [uid, c] of this.claims) if (c.devices.some((d) => d.deviceName === deviceName)) return uid;
    return undefined;
  }

  set(claimUid: string, claim: PreparedClaim): void {
    this.claims.set(claimUid, claim);
  }

  delete(claimUid: string): boolean {
    return this.claims.delete(claimUid);
  }

  async save(): Promise<void> {
    const data = { version: CHECKPOINT_VERSION, claims: Object.fromEntries(this.claims) };
    await writeFileAtomic(this.path, `${JSON.stringify(data)}\n`, { mode: 0o600, dirMode: 0o700 });
  }
}
