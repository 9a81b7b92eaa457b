/** Test helper: the audit function served in-process on a free port, records kept in memory. */
import type { Env, ServerHandle } from '../../../shared/runtime/index.js';
import { serve } from '../../../shared/runtime/index.js';
import type { Enrichment } from '../enrichment.js';
import { createAuditFunction } from '../index.js';
import { MemoryDestination } from './memory-destination.js';
import { goldenWorld } from './world.js';

export interface ServedAudit {
  readonly server: ServerHandle;
  readonly lines: string[];
  post(path: string, body: string | Buffer, headers?: Record<string, string>): Promise<{ status: number; text: string }>;
  close(): Promise<void>;
}

/**
 * `enrichment` null: the real one (informers on KUBECONFIG), as in production. Senders are not
 * checked (SENDER_AUTH=none) unless `env` says otherwise: the tests of the sender check set it.
 */
export async function serveAudit(env: Env = {}, enrichment: Enrichment | null = goldenWorld()): Promise<ServedAudit> {
  const destination = new MemoryDestination();
  const def = createAuditFunction(enrichment === null ? { destination } : { enrichment, destination });
  const server = await serve(def, { env: { PORT: '0', HOST: '127.0.0.1', SENDER_AUTH: 'none', ...env } });
  return {
    server,
    lines: destination.lines,
    async post(path, body, headers = { 'content-type': 'application/json' }) {
      const res = await fetch(`${server.url}${path}`, { method: 'POST', headers, body });
      return { status: res.status, text: await res.text() };
    },
    async close() {
      await server.close();
    },
  };
}
