/**
 * Carrying out planDevices' result on the import side, for the DRA driver's NodePrepareResources /
 * NodeUnprepareResources: every `import` plan is attached (idempotent by device name), `local` plans
 * need nothing here, `refuse` plans stay refused. One result per device, never all-or-nothing
 * surprises: the caller sees which device failed and why.
 */
import { errorMessage } from '../../../shared/errors/index.js';
import type { DevicePlan } from './gateway.js';
import type { UsbipImporter } from './importer.js';
import type { AttachmentRecord } from './records.js';

export type PreparedDevice =
  | { readonly device: string; readonly kind: 'local' }
  | { readonly device: string; readonly kind: 'attached'; readonly record: AttachmentRecord }
  | { readonly device: string; readonly kind: 'failed'; readonly reason: string };

export async function prepareRemote(importer: UsbipImporter, plans: readonly DevicePlan[]): Promise<PreparedDevice[]> {
  const results: PreparedDevice[] = [];
  for (const plan of plans) {
    if (plan.kind === 'local') results.push({ device: plan.device, kind: 'local' });
    else if (plan.kind === 'refuse') results.push({ device: plan.device, kind: 'failed', reason: plan.reason });
    else {
      try {
        const record = await importer.attach({ key: plan.device, host: plan.host, port: plan.port, busId: plan.busId, node: plan.exportNode });
        results.push({ device: plan.device, kind: 'attached', record });
      } catch (err: unknown) {
        results.push({ device: plan.device, kind: 'failed', reason: `import of ${plan.busId} from node ${plan.exportNode}: ${errorMessage(err)}` });
      }
    }
  }
  return results;
}

/** Detach the devices this node imported for a claim; devices it did not import are skipped. */
export async function unprepareRemote(importer: UsbipImporter, devices: readonly string[]): Promise<{ device: string; error?: string }[]> {
  const results: { device: string; error?: string }[] = [];
  for (const device of devices) {
    try {
      await importer.detach(device);
      results.push({ device });
    } catch (err: unknown) {
      results.push({ device, error: errorMessage(err) });
    }
  }
  return results;
}
