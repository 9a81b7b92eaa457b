/** Rules on object metadata that several resources share: name length, name syntax, reserved keys. */
import type { ObjectMeta } from '../../../shared/api/k8s/core.js';
import type { Findings } from '../decision.js';
import { pure, type Check } from './check.js';

interface HasMeta {
  readonly metadata: ObjectMeta;
}

export const RESERVED_KEY_PART = 'virtualization.deckhouse.io';

export function nameAtMost<T extends HasMeta>(max: number): Check<T> {
  return pure(`the name is at most ${max} characters`, ({ object }, out) => {
    const name = object.metadata.name ?? '';
    if (name.length > max) out.deny('metadata.name', `must be no more than ${max} characters (it has ${name.length})`);
  });
}

/** No '.' in the name: an error on create; on update only a warning (older objects may have one). */
export function nameWithoutDots<T extends HasMeta>(kind: string, onUpdate: 'deny' | 'warn' | 'skip'): Check<T> {
  return pure('the name has no dots', ({ object, operation }, out) => {
    const name = object.metadata.name ?? '';
    if (!name.includes('.')) return;
    const message = `the name of a ${kind} must not contain '.'`;
    if (operation === 'CREATE' || onUpdate === 'deny') out.deny('metadata.name', message);
    else if (onUpdate === 'warn') out.warn(`${message}; rename it when convenient`, 'metadata.name');
  });
}

/**
 * Label and annotation keys containing `virtualization.deckhouse.io` belong to the module. Users may not
 * add or change them; keys already on the object stay (the module itself writes some, e.g. during a
 * restore), and the module's own service accounts are not limited.
 */
export function reservedMetadataKeys<T extends HasMeta>(): Check<T> {
  return {
    name: `labels and annotations avoid the reserved ${RESERVED_KEY_PART} keys`,
    run: ({ object, oldObject, userInfo }, { cluster }, out) => {
      if (userInfo.username.startsWith(`system:serviceaccount:${cluster.moduleNamespace}:`)) return;
      reservedIn('labels', object.metadata.labels, oldObject?.metadata.labels, out);
      reservedIn('annotations', object.metadata.annotations, oldObject?.metadata.annotations, out);
    },
  };
}

function reservedIn(
  field: 'labels' | 'annotations',
  now: Readonly<Record<string, string>> | undefined,
  before: Readonly<Record<string, string>> | undefined,
  out: Findings,
): void {
  for (const [key, value] of Object.entries(now ?? {})) {
    if (!key.includes(RESERVED_KEY_PART) || before?.[key] === value) continue;
    out.deny(`metadata.${field}[${key}]`, `keys containing ${RESERVED_KEY_PART} are reserved for the module`);
  }
}
