/**
 * A CRD schema as facts by property path: `spec.cpu.cores`, `spec.blockDeviceRefs[].name`,
 * `spec.nodeSelector{}` (map values). Each path keeps only what the comparison with the original looks
 * at: type (`int-or-string` for quantities), pattern, enum, default and the required fields of an
 * object. Used on our generated CRDs and, by extract.ts, on the original's published ones.
 */
export interface Facts {
  type?: string;
  pattern?: string;
  enum?: unknown[];
  default?: unknown;
  required?: string[];
}

export type FactsByPath = Record<string, Facts>;

type Node = Record<string, unknown>;

function facts(node: Node): Facts {
  const out: Facts = {};
  const intOrString = node['x-kubernetes-int-or-string'] === true;
  const type = intOrString ? 'int-or-string' : node['type'];
  if (typeof type === 'string') out.type = type;
  if (typeof node['pattern'] === 'string') out.pattern = node['pattern'];
  if (Array.isArray(node['enum'])) out.enum = [...(node['enum'] as unknown[])].map(String).sort();
  if (node['default'] !== undefined) out.default = node['default'];
  if (Array.isArray(node['required']) && node['required'].length > 0) out.required = [...(node['required'] as string[])].sort();
  return out;
}

/** Every path under `node` (itself at `path`) with its facts. */
export function flatten(node: Node, path: string, out: FactsByPath = {}): FactsByPath {
  out[path] = facts(node);
  for (const [key, child] of Object.entries((node['properties'] ?? {}) as Record<string, Node>)) flatten(child, `${path}.${key}`, out);
  if (node['items'] !== null && typeof node['items'] === 'object') flatten(node['items'] as Node, `${path}[]`, out);
  const extra = node['additionalProperties'];
  if (extra !== null && typeof extra === 'object') flatten(extra as Node, `${path}{}`, out);
  return out;
}

/** The facts of the `spec` of every version of a CRD object: version -> path -> facts. */
export function specFacts(crd: Node): Record<string, FactsByPath> {
  const versions = ((crd['spec'] as Node | undefined)?.['versions'] ?? []) as Node[];
  const out: Record<string, FactsByPath> = {};
  for (const v of versions) {
    const root = ((v['schema'] as Node | undefined)?.['openAPIV3Schema'] ?? {}) as Node;
    const spec = (root['properties'] as Record<string, Node> | undefined)?.['spec'];
    const byPath: FactsByPath = { '': { required: [...((root['required'] ?? []) as string[])].filter((r) => r === 'spec') } };
    if (spec !== undefined) flatten(spec, 'spec', byPath);
    out[String(v['name'])] = byPath;
  }
  return out;
}
