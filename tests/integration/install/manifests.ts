import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadAll } from 'js-yaml';
import { kubectl } from '../../env/index.js';

/** The whole install, applied with `kubectl apply -k knative/`. */
export const KNATIVE_DIR = fileURLToPath(new URL('../../../knative/', import.meta.url));

/** The fields of a manifest the checks read; everything else stays opaque. */
export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

export interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  verbs: string[];
  nonResourceURLs?: string[];
}

/** Render a kustomize directory (below knative/) with the version-matched kubectl. */
export async function kustomize(dir: string = KNATIVE_DIR): Promise<Manifest[]> {
  const res = await kubectl(['kustomize', dir]);
  if (res.code !== 0) throw new Error(`kubectl kustomize ${dir} failed:\n${res.stderr}`);
  // As written: the client library's loader renames fields it maps to its own types (a NetworkPolicy
  // rule's `from` becomes `_from`), so the checks would read every rule as open to any source.
  return parseManifests(res.stdout);
}

export const isRbacRole = (m: Manifest): boolean => m.kind === 'ClusterRole' || m.kind === 'Role';

export const rulesOf = (m: Manifest): PolicyRule[] => (m['rules'] as PolicyRule[] | undefined) ?? [];

export const keyOf = (m: Manifest): string => `${m.kind}/${m.metadata.namespace ? `${m.metadata.namespace}/` : ''}${m.metadata.name}`;

/** The pod template spec of a workload of the install (Knative Service, Deployment, Job), if any. */
export function podSpecOf(m: Manifest): Record<string, unknown> | undefined {
  const spec = m['spec'] as { template?: { spec?: Record<string, unknown> } } | undefined;
  const workloadKinds = new Set(['Service/serving.knative.dev/v1', 'Deployment/apps/v1', 'Job/batch/v1', 'DaemonSet/apps/v1']);
  return workloadKinds.has(`${m.kind}/${m.apiVersion}`) ? spec?.template?.spec : undefined;
}

export interface Container {
  name: string;
  image: string;
  args?: string[];
  ports?: Array<{ name?: string; containerPort: number }>;
  securityContext?: Record<string, unknown>;
  readinessProbe?: { httpGet?: { path?: string; scheme?: string } };
  livenessProbe?: { httpGet?: { path?: string; scheme?: string }; tcpSocket?: { port?: number } };
}

export const containersOf = (m: Manifest): Container[] => (podSpecOf(m)?.['containers'] as Container[] | undefined) ?? [];

export const isKnativeService = (m: Manifest): boolean => m.kind === 'Service' && m.apiVersion === 'serving.knative.dev/v1';

/** The install plus the pre-delete hook Job (applied separately, before removal). */
export async function installAndHooks(): Promise<Manifest[]> {
  return [...(await kustomize()), ...(await kustomize(`${KNATIVE_DIR}hooks/pre-delete`))];
}

/** The objects of a YAML stream as written (no client-library typing), `kind: List` items included. */
export function parseManifests(text: string): Manifest[] {
  const isObject = (d: unknown): d is Manifest => typeof d === 'object' && d !== null && typeof (d as { kind?: unknown }).kind === 'string';
  return loadAll(text)
    .filter(isObject)
    .flatMap((m) => (m.kind === 'List' ? ((m['items'] as unknown[] | undefined) ?? []).filter(isObject) : [m]));
}

/** Every `.yaml`/`.yml` file below `dir`, recursively, as absolute paths. */
export async function yamlFilesUnder(dir: string = KNATIVE_DIR): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && /\.ya?ml$/.test(e.name))
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

/** Parse one manifest file. */
export async function readManifests(path: string): Promise<Manifest[]> {
  return parseManifests(await readFile(path, 'utf8'));
}
