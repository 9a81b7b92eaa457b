/**
 * Which CloudEvents start the clean-up. The ApiServerSource (knative/eventing/) sends every
 * ModuleConfig change: `dev.knative.apiserver.resource.{add,update,delete}` with the object as data
 * (Resource mode) or `dev.knative.apiserver.ref.*` with a reference (Reference mode). The module is
 * being removed when its ModuleConfig is deleted, or added/updated with `spec.enabled: false` (an
 * `add` is what a restarted source replays, so a missed update is not lost).
 */
import type { CloudEvent } from 'cloudevents';
import { z } from 'zod';
import { zodProblems } from '../../shared/config/index.js';
import { ValidationError } from '../../shared/errors/index.js';

export type Decision = { readonly act: true; readonly why: 'deleted' | 'disabled' } | { readonly act: false; readonly why: string };

const TYPE = /^dev\.knative\.apiserver\.(resource|ref)\.(add|update|delete)$/;

const dataSchema = z.looseObject({
  kind: z.string().optional(),
  name: z.string().optional(),
  metadata: z.looseObject({ name: z.string() }).optional(),
  spec: z.looseObject({ enabled: z.boolean().nullish() }).nullish(),
});

export function decide(event: Pick<CloudEvent<unknown>, 'type' | 'data'>, moduleConfigName: string): Decision {
  const type = TYPE.exec(event.type);
  if (type === null) return { act: false, why: `event type ${event.type} is not a ModuleConfig change` };
  const parsed = dataSchema.safeParse(event.data);
  if (!parsed.success) throw new ValidationError('event data is not a ModuleConfig or a reference to one', zodProblems(parsed.error));
  const { kind, spec } = parsed.data;
  const name = parsed.data.metadata?.name ?? parsed.data.name;
  if (name === undefined) throw new ValidationError('event data names no object', [{ path: 'metadata.name', message: 'required' }]);
  if (kind !== undefined && kind !== 'ModuleConfig') return { act: false, why: `a ${kind}, not a ModuleConfig` };
  if (name !== moduleConfigName) return { act: false, why: `ModuleConfig ${name} is not ${moduleConfigName}` };
  if (type[2] === 'delete') return { act: true, why: 'deleted' };
  if (type[1] === 'resource' && spec?.enabled === false) return { act: true, why: 'disabled' };
  return { act: false, why: `ModuleConfig ${name} is not disabled` };
}
