/**
 * `POST .../namespaces/<ns>/virtualmachinepools/<pool>/scaledownwith` `{"targets": [vm names]}`: the
 * original's addressed scale-down. Every target must be a member of the pool (its controller
 * ownerReference is the pool), else nothing is deleted; then the targets are deleted and
 * `spec.replicas` lowered by their number (never below 0), so they are not replaced. Never proxied.
 */
import { z } from 'zod';
import { isPoolMember } from '../../shared/api/pool-members.js';
import { VirtualMachineSchema, virtualMachine } from '../../shared/api/resources/virtualmachine.js';
import { VirtualMachinePoolSchema, virtualMachinePool, type VirtualMachinePool } from '../../shared/api/resources/vmpool.js';
import { BadRequestError, ConflictError, NotFoundError, errorMessage } from '../../shared/errors/index.js';
import { descriptorOf, type ResourceClient } from '../../shared/kube/index.js';
import type { RouteRequest, RouteResponse } from '../../shared/runtime/index.js';
import * as api from './api.js';
import type { RemoteUser } from './frontproxy.js';
import type { Ctx } from './state.js';

const FIELD_MANAGER = 'subresources';

/** The body: `targets` (1 or more VM names), `dryRun` as the apiserver's (["All"]) or a boolean. */
export const ScaleDownWithSchema = z.strictObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  targets: z.array(z.string().min(1, 'a target name must not be empty')).min(1, 'scaleDownWith requires a non-empty targets list'),
  dryRun: z.union([z.boolean(), z.array(z.literal('All'))]).optional(),
});

/** The body as the schema takes it, or a BadRequestError naming every problem. */
export function parseScaleDownWith(req: Pick<RouteRequest, 'json'>): z.infer<typeof ScaleDownWithSchema> {
  const parsed = ScaleDownWithSchema.safeParse(req.json());
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.length > 0 ? i.path.join('.') : 'body'}: ${i.message}`);
    throw new BadRequestError(`invalid scaleDownWith body: ${problems.join('; ')}`);
  }
  return parsed.data;
}

const isDryRun = (d: boolean | string[] | undefined): boolean => d === true || (Array.isArray(d) && d.length > 0);

export async function scaleDownWith(req: RouteRequest, ctx: Ctx, user: RemoteUser): Promise<RouteResponse> {
  const { namespace, name } = req.params as { namespace: string; name: string };
  let body;
  try {
    body = parseScaleDownWith(req);
  } catch (err: unknown) {
    if (err instanceof BadRequestError) return api.status(400, 'BadRequest', err.message);
    throw err;
  }
  const pools = ctx.state.kube.resource(descriptorOf(virtualMachinePool), VirtualMachinePoolSchema, FIELD_MANAGER);
  const vms = ctx.state.kube.resource(descriptorOf(virtualMachine), VirtualMachineSchema, FIELD_MANAGER);
  const opts = { signal: ctx.signal };
  try {
    let pool;
    try {
      pool = await pools.get({ namespace, name }, opts);
    } catch (err: unknown) {
      if (err instanceof NotFoundError) {
        return api.status(404, 'NotFound', `virtualmachinepools.virtualization.deckhouse.io "${name}" not found in namespace ${namespace}`, {
          name,
          group: 'virtualization.deckhouse.io',
          kind: 'virtualmachinepools',
        });
      }
      throw err;
    }
    const targets = [...new Set(body.targets)];
    const uids = new Map<string, string>();
    // Every target is checked before anything is deleted: a bad one refuses the whole request.
    for (const target of targets) {
      let vm;
      try {
        vm = await vms.get({ namespace, name: target }, opts);
      } catch (err: unknown) {
        if (err instanceof NotFoundError) return api.status(400, 'BadRequest', `target VirtualMachine "${target}" not found in namespace ${namespace}`);
        throw err;
      }
      if (!isPoolMember(vm, pool.metadata.uid ?? '')) {
        return api.status(400, 'BadRequest', `target VirtualMachine "${target}" does not belong to VirtualMachinePool "${name}"`);
      }
      uids.set(target, vm.metadata.uid ?? '');
    }
    if (isDryRun(body.dryRun))
      return { body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', message: `dry run: would remove ${targets.join(', ')}` } };
    for (const target of targets) {
      try {
        // The uid checked above: a VM of the same name made since then is not touched.
        await vms.delete({ namespace, name: target }, { ...opts, preconditions: { uid: uids.get(target) ?? '' } });
      } catch (err: unknown) {
        if (!(err instanceof NotFoundError) && !(err instanceof ConflictError)) throw err;
      }
    }
    const replicas = await lowerReplicas(pools, namespace, name, targets.length, ctx.signal);
    ctx.log.info({ namespace, pool: name, targets, replicas, user: user.name }, 'scaleDownWith: members removed');
    return { body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', message: `removed ${targets.join(', ')}; replicas ${replicas}` } };
  } catch (err: unknown) {
    ctx.log.warn({ err, namespace, pool: name }, 'scaleDownWith failed');
    return api.status(503, 'ServiceUnavailable', `scaleDownWith of VirtualMachinePool ${namespace}/${name}: ${errorMessage(err)}`);
  }
}

/** spec.replicas minus `removed` (not below 0), written conditionally on what was read; retried on conflict. */
async function lowerReplicas(
  pools: ResourceClient<VirtualMachinePool>,
  namespace: string,
  name: string,
  removed: number,
  signal: AbortSignal,
): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    const current = await pools.get({ namespace, name }, { signal });
    const replicas = Math.max(0, (current.spec.replicas ?? 0) - removed);
    try {
      await pools.mergePatch({ namespace, name }, { metadata: { resourceVersion: current.metadata.resourceVersion }, spec: { replicas } }, { signal });
      return replicas;
    } catch (err: unknown) {
      if (!(err instanceof ConflictError) || attempt >= 4) throw err;
    }
  }
}
