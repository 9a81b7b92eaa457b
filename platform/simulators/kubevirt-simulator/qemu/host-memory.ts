/**
 * Whether this machine can hold one more guest. A TCG guest's memory becomes resident as the guest
 * touches it, on top of QEMU's own (QEMU's RSS measured 190–240 MiB for a 128–256 MiB guest), so a
 * guest (or a migration target) starts only while the memory the kernel calls available leaves room
 * for the guest's memory, QEMU's own and a reserve for the rest of the machine; otherwise it is
 * refused with the figures, instead of the machine swapping itself to death.
 */
import { readFile } from 'node:fs/promises';

/** What one QEMU process needs besides its guest's memory, MiB (measured: up to about 240 MiB RSS for a 256 MiB guest, less when it has not touched all of it). */
export const QEMU_OVERHEAD_MIB = 96;
/** The memory kept for everything else on the machine unless configured (GUEST_HOST_RESERVE_MIB), MiB. */
export const DEFAULT_HOST_RESERVE_MIB = 1024;
/** The instance condition reason of a guest this machine cannot hold. */
export const INSUFFICIENT_HOST_MEMORY = 'InsufficientHostMemory';

/** A guest this machine cannot hold now; the message names the figures. */
export class InsufficientHostMemory extends Error {
  readonly reason = INSUFFICIENT_HOST_MEMORY;
}

/** MemAvailable of a /proc/meminfo text, MiB. */
export function memAvailableMiB(meminfo: string): number {
  const m = /^MemAvailable:\s+(\d+) kB$/m.exec(meminfo);
  if (m === null) throw new Error('/proc/meminfo has no "MemAvailable: <n> kB" line: the memory this machine has free cannot be told');
  return Math.floor(Number(m[1]) / 1024);
}

/** This machine's MemAvailable, MiB. */
export async function readMemAvailableMiB(): Promise<number> {
  return memAvailableMiB(await readFile('/proc/meminfo', 'utf8'));
}

/** Throws InsufficientHostMemory when a guest of `givenMiB` does not fit into `availableMiB` with `reserveMiB` kept. */
export function checkHostRoom(vm: string, givenMiB: number, availableMiB: number, reserveMiB: number): void {
  const needed = givenMiB + QEMU_OVERHEAD_MIB;
  if (availableMiB - needed >= reserveMiB) return;
  throw new InsufficientHostMemory(
    `this machine cannot hold the guest of ${vm} now: it needs about ${needed} MiB (${givenMiB} MiB of guest memory and about ${QEMU_OVERHEAD_MIB} MiB for QEMU), ` +
      `${availableMiB} MiB is available and ${reserveMiB} MiB is kept for the rest of the machine (GUEST_HOST_RESERVE_MIB); it starts once there is room`,
  );
}
