/**
 * The progress contract of disks and images, as the original keeps it: no progress while Pending (or
 * Failed), the importer's percentage while Provisioning or waiting for an upload (always below 100%),
 * exactly `100%` once Ready (a blank disk too). Applied to the status as a whole after every pass.
 */

/** The highest progress a disk or image shows before it is Ready. */
export const BEFORE_READY_MAX = 99.9;

const WITHOUT = new Set(['Pending', 'Failed']);
const RUNNING = new Set(['Provisioning', 'WaitForUserUpload', 'WaitForFirstConsumer']);

export function settleProgress(status: { phase?: string | undefined; progress?: string | undefined }): void {
  const phase = status.phase ?? 'Pending';
  if (WITHOUT.has(phase)) {
    delete status.progress;
    return;
  }
  if (phase === 'Ready') {
    status.progress = '100%';
    return;
  }
  if (!RUNNING.has(phase) || status.progress === undefined) return;
  const value = Number.parseFloat(status.progress);
  if (!Number.isFinite(value)) delete status.progress;
  else if (value > BEFORE_READY_MAX) status.progress = `${BEFORE_READY_MAX}%`;
}
