/** The VM a call is about (and whether its phase allows the subresource), and console/VNC session records. */
import { errorMessage } from '../../shared/errors/index.js';
import type { KubeObject } from '../../shared/kube/index.js';
import type { RouteResponse, UpgradeRequest } from '../../shared/runtime/index.js';
import * as api from './api.js';
import type { RemoteUser } from './frontproxy.js';
import type { Session, SessionKind } from './sessions.js';
import type { Ctx } from './state.js';

export const vmNotFound = (namespace: string, name: string): { status: number; body: object } =>
  api.status(404, 'NotFound', `virtualmachines.virtualization.deckhouse.io "${name}" not found in namespace ${namespace}`, {
    name,
    group: 'virtualization.deckhouse.io',
    kind: 'virtualmachines',
  });

/** The VM, or the answer when it is missing or not in a phase the subresource needs. */
export async function lookUp(
  ctx: Ctx,
  namespace: string,
  name: string,
  sub: api.Subresource | undefined,
): Promise<{ vm: KubeObject } | { refusal: { status: number; body: object } }> {
  let vm;
  try {
    vm = await ctx.state.vms.get(namespace, name, ctx.signal);
  } catch (err: unknown) {
    ctx.log.warn({ err, namespace, name }, 'VM lookup failed');
    return { refusal: api.status(503, 'ServiceUnavailable', `cannot look up VirtualMachine ${namespace}/${name}: ${errorMessage(err)}`) };
  }
  if (vm === undefined) return { refusal: vmNotFound(namespace, name) };
  if (sub?.needsRunning === true) {
    const allowed = sub.stream ? ['Running', 'Migrating'] : ['Running'];
    if (!allowed.includes(vm.phase ?? '')) {
      return {
        refusal: api.status(
          400,
          'BadRequest',
          `VirtualMachine ${namespace}/${name} is ${vm.phase ?? 'without a phase'}: ${sub.name} needs it ${allowed.join(' or ')}`,
        ),
      };
    }
  }
  return { vm: vm.object };
}

export const subresourceOf = (name: string): api.Subresource | undefined => api.SUBRESOURCES.find((s) => s.name === name);

export const isSessionKind = (sub: string): sub is SessionKind => sub === 'console' || sub === 'vnc';

/** `probe=true` on console/vnc: the session holding it now, without connecting. */
export async function probe(ctx: Ctx, namespace: string, name: string, kind: SessionKind): Promise<RouteResponse> {
  const found = await lookUp(ctx, namespace, name, undefined);
  if ('refusal' in found) return found.refusal;
  try {
    return { body: await ctx.state.sessions.probe(kind, found.vm) };
  } catch (err: unknown) {
    ctx.log.warn({ err, namespace, name, kind }, 'session lease not readable');
    return api.status(503, 'ServiceUnavailable', `cannot read the ${kind} session of VirtualMachine ${namespace}/${name}: ${errorMessage(err)}`);
  }
}

/** The session record of a console or VNC stream that just opened (nothing for port forwarding). */
export function track(ctx: Ctx, sub: string, vm: KubeObject, user: RemoteUser, request: UpgradeRequest['request']): Session | undefined {
  if (!isSessionKind(sub)) return undefined;
  return ctx.state.sessions.start(sub, vm, user.name, request.headers['user-agent'] ?? '');
}
