/**
 * start / stop / restart / migrate: create a VirtualMachineOperation for the VM and wait, reporting
 * each change of phase, progress and reason, until it is Completed (exit 0) or Failed/Superseded.
 */
import { VirtualMachineOperationSchema, virtualMachineOperation, type VirtualMachineOperation } from '../api/resources/vmop.js';
import { TimeoutError } from '../errors/index.js';
import { descriptorOf, sleep } from '../kube/index.js';
import type { Connection } from './connection.js';
import { InterruptedError, OperationFailedError } from './exit-codes.js';
import type { Io } from './io.js';
import { FIELD_MANAGER, getVirtualMachine } from './vm.js';

export type OperationType = 'Start' | 'Stop' | 'Restart' | 'Migrate';

export interface OperationRequest {
  type: OperationType;
  vm: string;
  force: boolean;
  /** Migrate only: labels the target node must carry. */
  nodeSelector?: Record<string, string> | undefined;
  /** false: create the operation and return at once. */
  wait: boolean;
  timeoutMs: number;
  /** Pause between two reads of the operation while waiting. */
  pollMs?: number;
}

const OUTCOME: Record<OperationType, string> = { Start: 'started', Stop: 'stopped', Restart: 'restarted', Migrate: 'migrated' };

/** Create the operation and (unless `wait` is false) wait for its end; throws on anything but Completed. */
export async function runOperation(conn: Connection, req: OperationRequest, io: Io, signal: AbortSignal): Promise<void> {
  const { namespace } = conn;
  // A clear "not found" before anything is created (the operation itself would only fail later).
  await getVirtualMachine(conn, req.vm, signal);
  const ops = conn.kube.resource(descriptorOf(virtualMachineOperation), VirtualMachineOperationSchema, FIELD_MANAGER);
  const spec: VirtualMachineOperation['spec'] = { type: req.type, virtualMachineName: req.vm };
  if (req.force) spec.force = true;
  if (req.type === 'Migrate' && req.nodeSelector !== undefined) spec.migrate = { nodeSelector: req.nodeSelector };
  const created = await ops.create(
    { apiVersion: 'virtualization.deckhouse.io/v1alpha2', kind: 'VirtualMachineOperation', metadata: { namespace, generateName: generateNameFor(req) }, spec },
    { signal },
  );
  const name = created.metadata.name ?? '';
  const label = `VirtualMachineOperation ${namespace}/${name}`;
  io.stderr.write(`${label} created: ${req.type} of VirtualMachine ${req.vm}\n`);
  if (!req.wait) {
    io.stdout.write(`virtualmachineoperation/${name} created\n`);
    return;
  }

  const deadline = AbortSignal.timeout(req.timeoutMs);
  const stop = AbortSignal.any([signal, deadline]);
  let reported = '';
  let op = created;
  for (;;) {
    const line = progressLine(op);
    if (line !== reported) io.stderr.write(`${label}: ${line}\n`);
    reported = line;
    const phase = op.status?.phase;
    if (phase === 'Completed') {
      io.stdout.write(`VirtualMachine ${namespace}/${req.vm} ${OUTCOME[req.type]} (virtualmachineoperation/${name} Completed)\n`);
      return;
    }
    if (phase === 'Failed' || phase === 'Superseded' || phase === 'Terminating') {
      throw new OperationFailedError(`${label} ${phase}${reasonOf(op) ? `: ${reasonOf(op)}` : ''}`);
    }
    const stopped = (): Error | undefined => {
      if (signal.aborted) return new InterruptedError(`stopped waiting; ${label} goes on`);
      if (deadline.aborted) return new TimeoutError(`${label} not finished after ${req.timeoutMs / 1000} s (last: ${line}); it goes on`);
      return undefined;
    };
    await sleep(req.pollMs ?? 1000, stop);
    try {
      op = await ops.get({ namespace, name }, { signal: stop });
    } catch (err: unknown) {
      throw stopped() ?? err;
    }
    const why = stopped();
    if (why) throw why;
  }
}

/** `restart-myvm-` style: the apiserver appends a random suffix; kept within 63 characters. */
function generateNameFor(req: OperationRequest): string {
  return `${req.type.toLowerCase()}-${req.vm}`.slice(0, 57).replace(/[-.]+$/, '') + '-';
}

/** The `Completed` condition's reason and message (what the operation is doing or why it failed). */
function reasonOf(op: VirtualMachineOperation): string {
  const cond = op.status?.conditions?.find((c) => c.type === 'Completed');
  if (cond === undefined) return '';
  return cond.message ? `${cond.reason}: ${cond.message}` : cond.reason;
}

/** One line of progress: phase, percentage and reason, e.g. `InProgress 33% (RestartInProgress)`. */
export function progressLine(op: VirtualMachineOperation): string {
  const parts: string[] = [op.status?.phase ?? 'Pending'];
  if (op.status?.progress) parts.push(op.status.progress);
  const reason = reasonOf(op);
  if (reason) parts.push(`(${reason})`);
  return parts.join(' ');
}
