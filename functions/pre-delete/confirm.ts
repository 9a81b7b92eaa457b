/**
 * The apiserver's word before anything is destroyed: an event (or the Job's start) only says that
 * the ModuleConfig went or was disabled; the clean-up goes ahead only when a read of the ModuleConfig
 * agrees (it is gone or being deleted, or it has `spec.enabled: false`). A contradicted request
 * answers 409 naming what the apiserver said, and a Warning Event on the ModuleConfig names the
 * sender, so a forged or stale event is visible where the module is configured.
 */
import { z } from 'zod';
import { ConflictError, NotFoundError } from '../../shared/errors/index.js';
import { kubeObjectSchema, type EventRecorder } from '../../shared/kube/index.js';
import type { Logger } from '../../shared/log/index.js';

export const moduleConfigSchema = kubeObjectSchema.extend({ spec: z.looseObject({ enabled: z.boolean().nullish() }).nullish() });
export type ModuleConfigObject = z.infer<typeof moduleConfigSchema>;

/** The one read the check makes; undefined when the ModuleConfig does not exist. */
export interface ModuleConfigReader {
  get(name: string, signal?: AbortSignal): Promise<ModuleConfigObject | undefined>;
}

export type Confirmation =
  | { readonly confirmed: true; readonly state: 'absent' | 'deleting' | 'disabled' }
  | { readonly confirmed: false; readonly reason: string; readonly moduleConfig: ModuleConfigObject };

/** What the apiserver says of the ModuleConfig right now. Throws when it cannot be read (the sender retries). */
export async function confirmRemoval(reader: ModuleConfigReader, name: string, signal?: AbortSignal): Promise<Confirmation> {
  const mc = await reader.get(name, signal);
  if (mc === undefined) return { confirmed: true, state: 'absent' };
  if (mc.metadata.deletionTimestamp) return { confirmed: true, state: 'deleting' };
  const enabled = mc.spec?.enabled;
  if (enabled === false) return { confirmed: true, state: 'disabled' };
  const said = enabled === true ? 'spec.enabled: true' : 'no spec.enabled: false';
  return {
    confirmed: false,
    reason: `the apiserver has ModuleConfig ${name} with ${said} (resourceVersion ${mc.metadata.resourceVersion ?? '?'})`,
    moduleConfig: mc,
  };
}

/** 409: the apiserver contradicts the request; nothing was deleted. */
export class RemovalNotConfirmedError extends ConflictError {
  override readonly code = 'PRE_DELETE_NOT_CONFIRMED';
}

export const REFUSED_REASON = 'PreDeleteRefused';

/**
 * Refuse a contradicted request: a Warning Event on the ModuleConfig naming the sender (best effort),
 * a log line, and the 409 to throw.
 */
export async function refuse(
  contradiction: Extract<Confirmation, { confirmed: false }>,
  o: { readonly claim: string; readonly sender: string | undefined; readonly events: Pick<EventRecorder, 'record'>; readonly log: Logger },
): Promise<RemovalNotConfirmedError> {
  const from = o.sender === undefined ? 'an unnamed sender' : `'${o.sender}'`;
  const note = `pre-delete refused a request from ${from} claiming the module was ${o.claim}: ${contradiction.reason}; nothing was deleted`;
  o.log.warn({ sender: o.sender, claim: o.claim }, note);
  await o.events.record(contradiction.moduleConfig, { type: 'Warning', reason: REFUSED_REASON, action: 'PreDelete', note });
  return new RemovalNotConfirmedError(note, { reason: REFUSED_REASON });
}

/** A reader on the apiserver through a ResourceClient's `get` (NotFound meaning absent). */
export function moduleConfigReader(client: { get(ref: { name: string }, opts?: { signal?: AbortSignal }): Promise<ModuleConfigObject> }): ModuleConfigReader {
  return {
    async get(name, signal) {
      try {
        return await client.get({ name }, signal === undefined ? {} : { signal });
      } catch (err: unknown) {
        if (err instanceof NotFoundError) return undefined;
        throw err;
      }
    },
  };
}
