import { describe, expect, it } from '@jest/globals';
import { checkHostRoom, InsufficientHostMemory, memAvailableMiB, QEMU_OVERHEAD_MIB } from './host-memory.js';

describe('whether this machine can hold one more guest', () => {
  it('reads MemAvailable from /proc/meminfo in MiB', () => {
    expect(memAvailableMiB('MemTotal:       24576000 kB\nMemFree:         1000 kB\nMemAvailable:    2097152 kB\nBuffers: 0 kB\n')).toBe(2048);
  });

  it('refuses to guess when MemAvailable is missing or not a number', () => {
    expect(() => memAvailableMiB('MemTotal: 1 kB\n')).toThrow(/no "MemAvailable: <n> kB" line/);
    expect(() => memAvailableMiB('MemAvailable: lots kB\n')).toThrow(/MemAvailable/);
  });

  it('lets a guest in while its memory, QEMU and the reserve fit, and refuses the next one naming the figures', () => {
    const fits = 256 + QEMU_OVERHEAD_MIB + 1024;
    expect(() => checkHostRoom('ns/a', 256, fits, 1024)).not.toThrow();
    let refused: unknown;
    try {
      checkHostRoom('ns/b', 256, fits - 1, 1024);
    } catch (err: unknown) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(InsufficientHostMemory);
    expect((refused as InsufficientHostMemory).reason).toBe('InsufficientHostMemory');
    expect((refused as Error).message).toBe(
      `this machine cannot hold the guest of ns/b now: it needs about ${256 + QEMU_OVERHEAD_MIB} MiB (256 MiB of guest memory and about ${QEMU_OVERHEAD_MIB} MiB for QEMU), ` +
        `${fits - 1} MiB is available and 1024 MiB is kept for the rest of the machine (GUEST_HOST_RESERVE_MIB); it starts once there is room`,
    );
  });
});
