/**
 * When virt-api (through its admission webhooks) or the apiserver refuses the internal VM the
 * controller built: the refusal in the user's words, and a per-VM backoff so the same object is not
 * sent again in a tight loop, whatever events wake the VM meanwhile.
 */
import { createHash } from 'node:crypto';
import { KubeApiError } from '../../../../shared/errors/index.js';

/** A refusal of the object itself (400 BadRequest, 422 Invalid, a webhook's denial): sending it again as it is cannot help. */
export function isRefusal(err: unknown): err is KubeApiError {
  return err instanceof KubeApiError && (err.status === 400 || err.status === 422);
}

/**
 * Internal field paths in KubeVirt's refusals, said as the VirtualMachine field the user wrote (the
 * internal object's paths are ours, not the user's). Checked in order; each replaces every match.
 */
const USER_WORDS: readonly (readonly [RegExp, string])[] = [
  [/spec\.template\.spec\.volumes\[\d+\]\.cloudInitNoCloud userdata/g, 'spec.provisioning.userData'],
  [/spec\.template\.spec\.volumes\[\d+\]\.cloudInitNoCloud/g, 'spec.provisioning'],
  [/\bUserDataSecretRef\b/g, 'spec.provisioning.userDataRef'],
  [/spec\.template\.spec\.domain\.machine\.type/g, 'the machine type (from spec.osType)'],
  [/spec\.template\.spec\.domain\.cpu/g, 'spec.cpu'],
  [/spec\.template\.spec\.domain\.memory/g, 'spec.memory'],
];

const WEBHOOK_PREFIX = /^admission webhook "[^"]*" denied the request:\s*/;

/** The apiserver's message of a refusal without the webhook's name, in the VM's field names, first letter capitalized. */
export function refusalMessage(err: KubeApiError): string {
  let text = (err.serverMessage ?? err.message).replace(WEBHOOK_PREFIX, '').trim();
  for (const [from, to] of USER_WORDS) text = text.replace(from, to);
  const said = text === '' ? `refused with HTTP ${err.status}` : text;
  return `KubeVirt refused the VM: ${said.charAt(0).toUpperCase()}${said.slice(1)}`;
}

/** A short stable digest of the object sent (a changed object is tried at once). */
export function fingerprint(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 16);
}

interface Entry {
  fingerprint: string;
  refusals: number;
  retryAt: number;
  message: string;
}

export interface RefusalBackoffOptions {
  baseMs: number;
  maxMs: number;
  now?: () => number;
}

/**
 * Per VM: the object last refused, when it may be sent again (base × 2^(refusals−1), capped) and why
 * it was refused. A different object (the user changed the VM) is sent at once; a success forgets.
 * Entries of VMs that are gone fall out once their wait is long over.
 */
export class RefusalBackoff {
  private readonly entries = new Map<string, Entry>();
  private readonly now: () => number;

  constructor(private readonly options: RefusalBackoffOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Still waiting to send this same object again: how long yet, and the refusal's message. */
  waiting(key: string, print: string): { waitMs: number; message: string } | undefined {
    const e = this.entries.get(key);
    if (e === undefined || e.fingerprint !== print) return undefined;
    const waitMs = e.retryAt - this.now();
    return waitMs > 0 ? { waitMs, message: e.message } : undefined;
  }

  /** The object was refused: returns the wait before it may be sent again. */
  refused(key: string, print: string, message: string): number {
    const now = this.now();
    this.prune(now);
    const before = this.entries.get(key);
    const refusals = before?.fingerprint === print ? before.refusals + 1 : 1;
    const waitMs = Math.min(this.options.maxMs, this.options.baseMs * 2 ** Math.min(refusals - 1, 40));
    this.entries.set(key, { fingerprint: print, refusals, retryAt: now + waitMs, message });
    return waitMs;
  }

  /** How many times in a row this VM's object was refused (0 when not). */
  refusals(key: string): number {
    return this.entries.get(key)?.refusals ?? 0;
  }

  forget(key: string): void {
    this.entries.delete(key);
  }

  private prune(now: number): void {
    for (const [key, e] of this.entries) if (now - e.retryAt > 2 * this.options.maxMs) this.entries.delete(key);
  }
}
