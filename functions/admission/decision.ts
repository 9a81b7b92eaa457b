/**
 * What a rule sees and what it answers. The decision for one request is a pure function of the
 * request and of what the lookups return; transport code only decodes and encodes around it.
 */
import type { FieldProblem } from '../../shared/errors/index.js';

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface UserInfo {
  readonly username: string;
  readonly groups: readonly string[];
}

/** One admission request after decoding, with `object` and `oldObject` already checked against their schema. */
export interface AdmissionInput<T> {
  readonly operation: Operation;
  readonly name: string;
  readonly namespace: string | undefined;
  readonly object: T;
  /** Present on UPDATE (and DELETE). */
  readonly oldObject: T | undefined;
  readonly userInfo: UserInfo;
  readonly subResource: string | undefined;
}

/** The answer: allowed exactly when there is no violation; warnings never deny. */
export interface Decision {
  readonly allowed: boolean;
  readonly violations: readonly FieldProblem[];
  readonly warnings: readonly string[];
}

/** Collects every violation and warning of one request (rules never stop at the first). */
export class Findings {
  readonly violations: FieldProblem[] = [];
  readonly warnings: string[] = [];

  deny(path: string, message: string): void {
    this.violations.push({ path, message });
  }

  warn(message: string, path?: string): void {
    this.warnings.push(path === undefined || path === '' ? message : `${path}: ${message}`);
  }

  /** Merge the findings of a part whose paths are relative to `prefix` (`spec.virtualMachineTemplate.spec`). */
  absorb(prefix: string, part: Findings): void {
    for (const v of part.violations) this.deny(joinPath(prefix, v.path), v.message);
    for (const w of part.warnings) this.warnings.push(prefix === '' ? w : `${prefix}: ${w}`);
  }

  decision(): Decision {
    return { allowed: this.violations.length === 0, violations: this.violations, warnings: this.warnings };
  }
}

/** `spec` + `cpu.cores` -> `spec.cpu.cores`; `spec` + `[0].name` -> `spec[0].name`. */
export function joinPath(prefix: string, path: string): string {
  if (prefix === '') return path;
  if (path === '') return prefix;
  return path.startsWith('[') ? `${prefix}${path}` : `${prefix}.${path}`;
}

export function allow(): Decision {
  return { allowed: true, violations: [], warnings: [] };
}

export function deny(violations: readonly FieldProblem[], warnings: readonly string[] = []): Decision {
  return { allowed: false, violations, warnings };
}
