/**
 * VirtualMachineClass v1alpha3 -> v1alpha2 for validation (the conversion itself is shared with the
 * conversion webhook: shared/api/resources/virtualmachineclass-conversion.ts).
 */
import { convertVirtualMachineClass } from '../../../shared/api/resources/virtualmachineclass-conversion.js';
import type { Parsed } from './validator.js';

export function fromV1alpha3(raw: unknown): Parsed<unknown> {
  return convertVirtualMachineClass(raw, 'v1alpha2');
}
