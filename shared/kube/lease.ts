import { z } from 'zod';
import { ObjectMetaSchema } from '../api/k8s/core.js';
import type { ResourceDescriptor } from './descriptor.js';
import { formatMicroTime, type EpochMicros } from './microtime.js';
import { microTimeSchema } from './schemas.js';

export const leaseDescriptor: ResourceDescriptor = {
  group: 'coordination.k8s.io',
  version: 'v1',
  plural: 'leases',
  kind: 'Lease',
  namespaced: true,
};

export const leaseSpecSchema = z.looseObject({
  holderIdentity: z.string().optional(),
  leaseDurationSeconds: z.number().int().optional(),
  acquireTime: microTimeSchema.optional(),
  renewTime: microTimeSchema.optional(),
  leaseTransitions: z.number().int().optional(),
});

export const leaseSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: ObjectMetaSchema,
  spec: leaseSpecSchema.optional(),
});

export type Lease = z.infer<typeof leaseSchema>;
export type LeaseSpec = z.infer<typeof leaseSpecSchema>;

/** The spec a candidate writes to take the lease, or the holder writes to renew it. */
export function acquiredSpec(current: LeaseSpec | undefined, identity: string, now: EpochMicros, durationSeconds: number): LeaseSpec {
  const renewing = current?.holderIdentity === identity;
  const time = formatMicroTime(now);
  return {
    ...current,
    holderIdentity: identity,
    leaseDurationSeconds: durationSeconds,
    acquireTime: renewing && current.acquireTime !== undefined ? current.acquireTime : time,
    renewTime: time,
    leaseTransitions: (current?.leaseTransitions ?? 0) + (renewing || current === undefined ? 0 : 1),
  };
}

/** The spec the holder writes when it steps down: no holder and a 1 s duration, so anyone may take it. */
export function releasedSpec(current: LeaseSpec | undefined, now: EpochMicros): LeaseSpec {
  const time = formatMicroTime(now);
  return { ...current, holderIdentity: '', leaseDurationSeconds: 1, acquireTime: time, renewTime: time };
}

/**
 * Whether another candidate validly holds the lease. Like client-go, expiry is judged from when this
 * process last saw the record change (observedAtMs, its own clock), not from renewTime, so clock skew
 * between machines does not matter.
 */
export function heldByOther(spec: LeaseSpec | undefined, identity: string, observedAtMs: number, nowMs: number): boolean {
  const holder = spec?.holderIdentity ?? '';
  if (holder === '' || holder === identity) return false;
  return observedAtMs + (spec?.leaseDurationSeconds ?? 0) * 1000 > nowMs;
}

/** The parts of a record whose change means the holder is alive (renewed, released or replaced). */
export function recordFingerprint(spec: LeaseSpec | undefined): string {
  return JSON.stringify([spec?.holderIdentity, spec?.renewTime, spec?.acquireTime, spec?.leaseTransitions, spec?.leaseDurationSeconds]);
}
