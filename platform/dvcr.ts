/**
 * DVCR on the local platform: Debian's docker-registry as a supervised process (tests/env/local-registry.ts),
 * and the Deployment `dvcr` that stands for it in the module namespace. No Pod of it runs (replicas 0):
 * the Deployment is where the controller's DVCR garbage collection reports (its GarbageCollection
 * condition), as on the original's Deployment of the same name.
 */
import { join } from 'node:path';
import { startLocalRegistry, type LocalRegistry } from '../tests/env/local-registry.js';
import { MODULE_NAMESPACE } from './identities.js';
import type { Parts } from './parts.js';

export const DVCR_DEPLOYMENT = 'dvcr';

/** DVCR: Debian's docker-registry on a free loopback port, storage in the work directory, supervised like the rest. */
export async function startDvcr(p: Parts): Promise<LocalRegistry> {
  const registry = await startLocalRegistry({ dir: join(p.o.workDir, 'dvcr'), detached: true });
  p.supervisor.add(registry.process, { graceMs: 3_000 });
  return registry;
}

/** The Deployment `dvcr` of the module namespace, with no replicas: the registry runs as the platform's process at `registry.url`. */
export function dvcrDeployment(registry: Pick<LocalRegistry, 'url'>): Record<string, unknown> {
  const labels = { app: DVCR_DEPLOYMENT };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: DVCR_DEPLOYMENT,
      namespace: MODULE_NAMESPACE,
      labels,
      annotations: {
        'virtualization.deckhouse.io/local-platform': `DVCR runs as a local process of npm start at ${registry.url}; this Deployment carries its status`,
      },
    },
    spec: {
      replicas: 0,
      selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: { containers: [{ name: 'dvcr', image: 'docker-registry' }] } },
    },
  };
}
