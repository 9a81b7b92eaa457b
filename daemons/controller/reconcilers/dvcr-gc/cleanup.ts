/**
 * The cleaner: what the original's DVCR-side `auto-cleanup` does, here through the registry's API.
 * Every repository of the catalog that the module writes (`cvi/…`, `vi/…`, `vd/…`) is listed; the
 * manifests of tags no live object wants are deleted by digest (a digest a wanted tag of the same
 * repository shares is kept); then the registry's own blob garbage collection runs when a command
 * for it is configured (DVCR_GC_COMMAND; the registry frees blobs offline, as `garbage-collect`).
 */
import { execFile } from 'node:child_process';
import { errorMessage } from '../../../../shared/errors/index.js';
import { RegistryClient, type RegistryClientOptions } from '../../../../shared/oci/client.js';
import type { ImageReference } from '../../../../shared/oci/reference.js';
import type { Logger } from '../../../../shared/log/index.js';
import { garbageTags, type GcResult } from './state.js';

export interface DvcrEndpoint {
  readonly scheme: 'http' | 'https';
  /** host[:port] */
  readonly registry: string;
  readonly options?: RegistryClientOptions;
}

export interface CleanupReport {
  /** Repositories that lost every tag. */
  readonly repositories: string[];
  /** repo:tag of every tag deleted. */
  readonly tags: string[];
}

const client = (dvcr: DvcrEndpoint, repository: string, reference = 'latest'): RegistryClient => {
  const ref: ImageReference = { scheme: dvcr.scheme, registry: dvcr.registry, repository, reference };
  return new RegistryClient(ref, { timeoutMs: 30_000, ...dvcr.options });
};

/** Delete the manifests no live object wants; registry failures throw (the run reports them). */
export async function deleteUnwanted(
  dvcr: DvcrEndpoint,
  wanted: ReadonlyMap<string, ReadonlySet<string>>,
  log: Logger,
  signal: AbortSignal,
): Promise<CleanupReport> {
  const options = { ...dvcr.options, signal };
  const report: CleanupReport = { repositories: [], tags: [] };
  const repos = await client({ ...dvcr, options }, '').listRepositories();
  for (const repo of repos) {
    const c = client({ ...dvcr, options }, repo);
    const tags = await c.listTags();
    const garbage = garbageTags(repo, tags, wanted);
    if (garbage.length === 0) continue;
    const kept = tags.filter((t) => !garbage.includes(t));
    const keptDigests = new Set<string>();
    for (const t of kept) {
      const d = await c.resolveDigest(t);
      if (d !== undefined) keptDigests.add(d);
    }
    for (const t of garbage) {
      const digest = await c.resolveDigest(t);
      if (digest === undefined || keptDigests.has(digest)) continue;
      await c.deleteManifest(digest);
      report.tags.push(`${repo}:${t}`);
      log.info({ repository: repo, tag: t, digest }, 'deleted a DVCR image no object owns');
    }
    if (kept.length === 0) report.repositories.push(repo);
  }
  return report;
}

/** Run the registry's blob garbage collection command (no shell; words split on blanks). */
export function runBlobGc(command: string, signal: AbortSignal): Promise<string> {
  const [file, ...args] = command.trim().split(/\s+/);
  return new Promise((resolve, reject) => {
    execFile(file ?? '', args, { signal, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      if (err !== null) reject(new Error(`the blob garbage collection \`${command}\` failed: ${stderr.trim().slice(-500) || err.message}`, { cause: err }));
      else resolve(stdout);
    });
  });
}

/** One whole cleanup: delete, then free blobs; the outcome as the cleaner reports it (never throws). */
export async function cleanupDvcr(
  dvcr: DvcrEndpoint,
  wanted: ReadonlyMap<string, ReadonlySet<string>>,
  blobGcCommand: string,
  log: Logger,
  signal: AbortSignal,
): Promise<GcResult> {
  try {
    const report = await deleteUnwanted(dvcr, wanted, log, signal);
    let blobs = 'blob garbage collection is left to DVCR (no DVCR_GC_COMMAND)';
    if (blobGcCommand.trim() !== '') {
      await runBlobGc(blobGcCommand, signal);
      blobs = 'blobs freed';
    }
    const message = `Deleted ${String(report.tags.length)} image(s) of objects that no longer exist (${String(report.repositories.length)} repositories emptied); ${blobs}.`;
    return { result: 'success', message, deletedRepositories: report.repositories, deletedTags: report.tags };
  } catch (err: unknown) {
    if (signal.aborted) throw err;
    log.error({ err }, 'DVCR garbage collection failed');
    return { result: 'fail', error: `DVCR garbage collection failed: ${errorMessage(err)}` };
  }
}
