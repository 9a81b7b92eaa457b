/**
 * The demo: a VirtualMachineClass, a disk (marked Ready by the demo: the import pipeline is not built
 * yet), a VM that the controller, the scheduler, kwok and the KubeVirt simulator bring to Running, a
 * Restart and a Migrate operation, and a forbidden action by a user bound to the User role; then the
 * audit records of the create, the restart and the refusal. Every write goes through the apiserver
 * as the acting user (kubectl), so the webhooks, RBAC and the audit webhook see what a person would do.
 */
import { waitFor } from '../../shared/testing/wait.js';
import { errorMessage } from '../../shared/errors/index.js';
import type { KubeClient } from '../../shared/kube/index.js';
import type { Kubectl } from '../install.js';
import { auditRecords, operationRow, vmRow, type OperationRow, type VMRow } from './snapshot.js';
import {
  DEMO_CLASS,
  DEMO_DISK,
  DEMO_NAMESPACE,
  DEMO_VM,
  OPERATOR,
  VIEWER,
  disk,
  namespace,
  operation,
  readyDiskStatus,
  roleBinding,
  vm,
  vmClass,
} from './objects.js';

export interface DemoDeps {
  admin: KubeClient;
  /** kubectl as the platform's admin, as the operator (Admin role) and as the viewer (User role). */
  kubectl: { admin: Kubectl; operator: Kubectl; viewer: Kubectl };
  /** The audit function's output, when the platform's apiserver feeds it. */
  auditLog: string | undefined;
  say(line: string): void;
  /** When `npm start` began (ms since the epoch): the time to the VM Running is measured from it. */
  t0: number;
}

export interface DemoResult {
  /** From `npm start` to the demo VM Running. */
  vmRunningAfterMs: number;
  firstNode: string;
  migratedTo: string;
  ip: string;
}

const WAIT = { timeoutMs: 180_000, intervalMs: 200 };
const yaml = (o: unknown): string => JSON.stringify(o);
const GROUP = '/apis/virtualization.deckhouse.io/v1alpha2';

async function getVM(admin: KubeClient): Promise<VMRow> {
  return vmRow(
    (await admin.rest.request({
      method: 'GET',
      path: `${GROUP}/namespaces/${DEMO_NAMESPACE}/virtualmachines/${DEMO_VM}`,
      what: 'get the demo VM',
    })) as Parameters<typeof vmRow>[0],
  );
}

async function getOp(admin: KubeClient, name: string): Promise<OperationRow> {
  const path = `${GROUP}/namespaces/${DEMO_NAMESPACE}/virtualmachineoperations/${name}`;
  return operationRow((await admin.rest.request({ method: 'GET', path, what: `get operation ${name}` })) as Parameters<typeof operationRow>[0]);
}

async function operationCompletes(d: DemoDeps, name: string): Promise<void> {
  await waitFor(
    `operation ${name} Completed`,
    async () => {
      const op = await getOp(d.admin, name);
      if (op.phase === 'Failed') throw new Error(`operation ${name} failed (${op.detail})`);
      return op.phase === 'Completed';
    },
    WAIT,
  );
}

const running = (v: VMRow): boolean => v.phase === 'Running' && v.node !== '' && v.ip !== '';

export async function runDemo(d: DemoDeps): Promise<DemoResult> {
  const { admin, operator, viewer } = d.kubectl;
  d.say(`▶ namespace ${DEMO_NAMESPACE}: ${OPERATOR.name} gets the Admin role of the module, ${VIEWER.name} the User role`);
  await admin(['apply', '-f', '-'], yaml({ apiVersion: 'v1', kind: 'List', items: [namespace(), roleBinding(OPERATOR), roleBinding(VIEWER)] }));

  d.say(`▶ VirtualMachineClass ${DEMO_CLASS} (CPU model Nehalem, 1-4 cores)`);
  await admin(['apply', '-f', '-'], yaml(vmClass()));
  await waitFor(
    'the class Ready',
    async () => {
      const cls = (await d.admin.rest.request({ method: 'GET', path: `${GROUP}/virtualmachineclasses/${DEMO_CLASS}`, what: 'get the demo class' })) as {
        status?: { phase?: string };
      };
      return cls.status?.phase === 'Ready';
    },
    WAIT,
  );
  d.say(`✓ class ${DEMO_CLASS} Ready on the simulated nodes`);

  d.say(`▶ ${OPERATOR.name}: VirtualDisk ${DEMO_DISK} (blank, 10Gi)`);
  await operator(['apply', '-f', '-'], yaml(disk()));
  d.say('  (images and disk import are not built yet: no image, no import progress; the demo marks the disk Ready itself)');
  await admin(['-n', DEMO_NAMESPACE, 'patch', 'virtualdisk', DEMO_DISK, '--subresource=status', '--type=merge', '-p', yaml({ status: readyDiskStatus })]);

  d.say(`▶ ${OPERATOR.name}: VirtualMachine ${DEMO_VM} (1 core, 1Gi, runPolicy AlwaysOn)`);
  await operator(['apply', '-f', '-'], yaml(vm()));
  const first = await waitFor(
    'the VM Running',
    async () => {
      const v = await getVM(d.admin);
      return running(v) && v;
    },
    WAIT,
  );
  const vmRunningAfterMs = Date.now() - d.t0;
  d.say(`✓ ${DEMO_VM} Running on ${first.node} with IP ${first.ip}: ${(vmRunningAfterMs / 1000).toFixed(1)} s after npm start`);

  d.say(`▶ ${OPERATOR.name}: VirtualMachineOperation restart-${DEMO_VM} (Restart)`);
  await operator(['apply', '-f', '-'], yaml(operation(`restart-${DEMO_VM}`, 'Restart')));
  await operationCompletes(d, `restart-${DEMO_VM}`);
  const restarted = await waitFor(
    'the VM Running again',
    async () => {
      const v = await getVM(d.admin);
      return running(v) && v;
    },
    WAIT,
  );
  d.say(`✓ restarted: a new instance runs on ${restarted.node}`);

  d.say(`▶ ${OPERATOR.name}: VirtualMachineOperation migrate-${DEMO_VM} (Migrate, live)`);
  await operator(['apply', '-f', '-'], yaml(operation(`migrate-${DEMO_VM}`, 'Migrate')));
  await operationCompletes(d, `migrate-${DEMO_VM}`);
  const migrated = await waitFor(
    'the VM Running on another node',
    async () => {
      const v = await getVM(d.admin);
      return running(v) && v.node !== restarted.node && v;
    },
    WAIT,
  );
  d.say(`✓ migrated: ${restarted.node} → ${migrated.node}, same IP ${migrated.ip}`);

  d.say(`▶ ${VIEWER.name} (User role) tries to stop ${DEMO_VM}`);
  const refusal = await viewer(['apply', '-f', '-'], yaml(operation(`stop-${DEMO_VM}`, 'Stop'))).then(
    () => undefined,
    (err: unknown) => errorMessage(err),
  );
  if (refusal === undefined || !/forbidden/i.test(refusal)) throw new Error(`${VIEWER.name} was not refused: ${refusal ?? 'the operation was created'}`);
  const why = /is forbidden: (.*)$/m.exec(refusal)?.[1] ?? 'forbidden';
  d.say(`✓ refused by RBAC (403): ${why}`);

  if (d.auditLog !== undefined) {
    const log = d.auditLog;
    const wanted = [
      `Virtual machine '${DEMO_VM}' has been created by '${OPERATOR.name}'`,
      `Virtual machine '${DEMO_VM}' has been restarted by '${OPERATOR.name}'`,
      `User '${VIEWER.name}' attempted to perform a forbidden operation`,
    ];
    await waitFor(
      'the audit records of the create, the restart and the refusal',
      async () => {
        const names = (await auditRecords(log)).map((r) => r.name);
        return wanted.every((w) => names.some((n) => n.startsWith(w)));
      },
      WAIT,
    );
    d.say('✓ audit records: created, restarted, forbidden (see AUDIT)');
  }
  return { vmRunningAfterMs, firstNode: first.node, migratedTo: migrated.node, ip: migrated.ip };
}
