/**
 * The access mode and volume mode of a claim the controller makes for a disk or an image, as the
 * original resolves them: the object's annotations first, then the StorageClass's, then the class's
 * StorageProfile (the set with the widest access mode, then Block before Filesystem). A mode the
 * class's provisioner is known not to give is refused with a message naming where it came from.
 * Pure: the vd and vi reconcilers call it with what their caches hold.
 */
import type { AccessMode, StorageProfile, VolumeMode } from '../../../../shared/api/resources/storageprofile.js';
import { ACCESS_MODES, VOLUME_MODES } from '../../../../shared/api/resources/storageprofile.js';
import type { KubeObject } from '../../../../shared/kube/index.js';
import { knownSets } from '../storageprofile/capabilities.js';
import type { StorageClass } from './kube.js';

export const VOLUME_MODE_ANNOTATION = 'virtualdisk.virtualization.deckhouse.io/volume-mode';
export const ACCESS_MODE_ANNOTATION = 'virtualdisk.virtualization.deckhouse.io/access-mode';

export interface ClaimModes {
  accessMode: AccessMode;
  volumeMode: VolumeMode;
}

export type ModesResult = { ok: true; modes: ClaimModes } | { ok: false; problem: 'profileNotFound' | 'unsupportedMode'; message: string };

const ACCESS_WEIGHT: Record<AccessMode, number> = { ReadOnlyMany: 0, ReadWriteOncePod: 1, ReadWriteOnce: 2, ReadWriteMany: 3 };
const VOLUME_WEIGHT: Record<VolumeMode, number> = { Filesystem: 0, Block: 1 };

const pick = <T extends string>(allowed: readonly T[], value: string | undefined): T | undefined => allowed.find((v) => v === value);
/** The original takes only these two from annotations. */
const ANNOTATED_ACCESS = ['ReadWriteOnce', 'ReadWriteMany'] as const;

/** The preferred set of a profile's status: the widest access mode, then Block; RWO Filesystem when it states none. */
export function preferredModes(profile: StorageProfile): ClaimModes {
  let best: ClaimModes | undefined;
  let bestWeight = -1;
  for (const set of profile.status?.claimPropertySets ?? []) {
    const access = set.accessModes.reduce<AccessMode | undefined>((a, m) => (a === undefined || ACCESS_WEIGHT[m] > ACCESS_WEIGHT[a] ? m : a), undefined);
    if (access === undefined) continue;
    const weight = ACCESS_WEIGHT[access] * 2 + VOLUME_WEIGHT[set.volumeMode];
    if (weight > bestWeight) [best, bestWeight] = [{ accessMode: access, volumeMode: set.volumeMode }, weight];
  }
  return best ?? { accessMode: 'ReadWriteOnce', volumeMode: 'Filesystem' };
}

/** The claim's modes for `obj` on `cls` with the class's profile (undefined: not made yet). */
export function resolveClaimModes(obj: KubeObject, cls: StorageClass, profile: StorageProfile | undefined): ModesResult {
  const name = cls.metadata.name ?? '';
  const from = (o: KubeObject | StorageClass): Partial<ClaimModes> => ({
    ...optional('accessMode', pick(ANNOTATED_ACCESS, o.metadata.annotations?.[ACCESS_MODE_ANNOTATION])),
    ...optional('volumeMode', pick(VOLUME_MODES, o.metadata.annotations?.[VOLUME_MODE_ANNOTATION])),
  });
  const own = { ...from(cls), ...from(obj) };
  let source = `the annotations of ${obj.kind ?? 'the object'} ${obj.metadata.name ?? ''} or StorageClass ${name}`;
  let modes: ClaimModes;
  if (own.accessMode !== undefined && own.volumeMode !== undefined) {
    modes = { accessMode: own.accessMode, volumeMode: own.volumeMode };
  } else {
    if (profile === undefined) return { ok: false, problem: 'profileNotFound', message: `storage profile ${name} not found` };
    modes = { ...preferredModes(profile), ...own };
    source = `StorageProfile ${name}`;
  }
  const known = knownSets(cls.provisioner);
  if (known === undefined) return { ok: true, modes };
  const volumes = [...new Set(known.map((s) => s.volumeMode))];
  const access = [...new Set(known.flatMap((s) => s.accessModes))];
  if (!volumes.includes(modes.volumeMode)) {
    return {
      ok: false,
      problem: 'unsupportedMode',
      message: `${source} sets volume mode ${modes.volumeMode}, which StorageClass ${name} (provisioner ${cls.provisioner}) cannot give: it gives ${volumes.join(', ')}`,
    };
  }
  if (!access.includes(modes.accessMode)) {
    return {
      ok: false,
      problem: 'unsupportedMode',
      message: `${source} sets access mode ${modes.accessMode}, which StorageClass ${name} (provisioner ${cls.provisioner}) cannot give: it gives ${ACCESS_MODES.filter((m) => access.includes(m)).join(', ')}`,
    };
  }
  return { ok: true, modes };
}

function optional<K extends string, V>(key: K, value: V | undefined): Partial<Record<K, V>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, V>);
}
