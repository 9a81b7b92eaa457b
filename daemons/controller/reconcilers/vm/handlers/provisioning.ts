import { VMCondition } from '../../../../../shared/api/conditions/index.js';
import { NotFoundError } from '../../../../../shared/errors/index.js';
import type { Deps } from '../../../deps.js';
import type { Handler } from '../../../engine/reconciler.js';
import { condition, dropCondition, type VMState } from '../state.js';

const C = VMCondition.ProvisioningReady;

/** Keys a provisioning Secret must have one of, by provisioning type. */
export const PROVISIONING_KEYS = {
  UserDataRef: ['userData', 'userdata'],
  SysprepRef: ['autounattend.xml', 'unattend.xml'],
} as const;

/** Checks that the Secret a VM's provisioning references exists and carries the expected key. */
export function provisioningHandler(deps: Deps): Handler<VMState> {
  return {
    name: 'provisioning',
    async handle(s, ctx): Promise<void> {
      const p = s.obj.spec.provisioning;
      if (p === undefined) return dropCondition(s, C.type);
      const ref = p.type === 'UserDataRef' ? p.userDataRef : p.type === 'SysprepRef' ? p.sysprepRef : undefined;
      if (p.type === 'UserData' || ref === undefined) {
        condition(s, ctx, { type: C.type, status: 'True', reason: C.reason.ProvisioningReady });
        return;
      }
      const problem = await secretProblem(deps, s.obj.metadata.namespace, ref.name, PROVISIONING_KEYS[p.type], ctx.signal);
      if (problem === undefined) {
        condition(s, ctx, { type: C.type, status: 'True', reason: C.reason.ProvisioningReady });
        return;
      }
      condition(s, ctx, { type: C.type, status: 'False', reason: C.reason.ProvisioningNotReady, message: problem });
      s.waitingFor.push(problem);
    },
  };
}

async function secretProblem(
  deps: Deps,
  namespace: string | undefined,
  name: string,
  keys: readonly string[],
  signal: AbortSignal,
): Promise<string | undefined> {
  try {
    const secret = await deps.clients.secrets.get({ namespace, name }, { signal });
    const data = { ...(secret.data ?? {}), ...((secret as { stringData?: Record<string, string> }).stringData ?? {}) };
    if (keys.some((k) => data[k] !== undefined)) return undefined;
    return `Secret ${name} has none of the keys ${keys.join(', ')}`;
  } catch (err: unknown) {
    if (err instanceof NotFoundError) return `Secret ${name} not found`;
    throw err;
  }
}
