/**
 * The result of a run, as the controller reads it: one JSON object in the termination-message file
 * (Kubernetes shows at most 4 KiB of it in the pod's status), and the exit code.
 */
import { writeFileSync } from 'node:fs';
import type { FailureReason } from './errors.js';
import type { ImportSuccess } from './run.js';

export interface ImportFailure {
  readonly phase: 'Failed';
  readonly reason: FailureReason;
  readonly message: string;
}

export type ImportResult = ImportSuccess | ImportFailure;

export const EXIT = { succeeded: 0, failed: 1, invalidConfig: 2 } as const;

const LIMIT = 4096;

/** The result as the termination message: messages are shortened so the whole stays under 4 KiB. */
export function encodeResult(result: ImportResult): string {
  const text = JSON.stringify(result);
  if (text.length <= LIMIT || result.phase !== 'Failed') return text;
  return JSON.stringify({ ...result, message: `${result.message.slice(0, LIMIT - 200)}...` });
}

/** Write the result; a missing termination-log directory (a local run) is not an error worth failing for. */
export function writeResult(path: string, result: ImportResult): boolean {
  try {
    writeFileSync(path, encodeResult(result));
    return true;
  } catch {
    return false;
  }
}
