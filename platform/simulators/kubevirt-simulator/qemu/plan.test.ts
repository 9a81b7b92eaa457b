import { describe, expect, it } from '@jest/globals';
import { coldPlugPorts, HOTPLUG_PORTS, qemuArgs, type GuestPlan } from './plan.js';

const plan = (disks: GuestPlan['disks']): GuestPlan => ({ cpus: 1, memoryMiB: 128, givenMiB: 128, capped: false, disks });
const devices = (args: string[]): string[] => args.filter((_, i) => args[i - 1] === '-device');

describe('the QEMU argv of a guest with hot-pluggable disks', () => {
  it('gives every guest the hot-plug root ports, each on its own chassis', () => {
    const ports = devices(qemuArgs(plan([]), '/w', 'tcg', 'ns/vm')).filter((d) => d.startsWith('pcie-root-port'));
    expect(ports).toHaveLength(HOTPLUG_PORTS);
    expect(ports[0]).toBe('pcie-root-port,id=hp0,bus=pcie.0,chassis=1');
    expect(new Set(ports.map((p) => /chassis=(\d+)/.exec(p)?.[1])).size).toBe(HOTPLUG_PORTS);
  });

  it('puts hot-pluggable disks on the ports in order, the others on the root complex, read-only ones read-only', () => {
    const args = qemuArgs(
      plan([
        { name: 'root', file: '/r.img', format: 'raw', cdrom: false, bootOrder: 1 },
        { name: 'vd-data', file: '/d.img', format: 'qcow2', cdrom: false, hotpluggable: true },
        { name: 'vi-iso', file: '/i.img', format: 'raw', cdrom: false, hotpluggable: true, readOnly: true },
      ]),
      '/w',
      'tcg',
      'ns/vm',
    );
    const disks = devices(args).filter((d) => d.startsWith('virtio-blk-pci'));
    expect(disks).toEqual([
      'virtio-blk-pci,drive=disk0,id=root,bootindex=1',
      'virtio-blk-pci,drive=disk1,id=vd-data,bus=hp0',
      'virtio-blk-pci,drive=disk2,id=vi-iso,bus=hp1',
    ]);
    expect(args).toContain('driver=raw,file=file2,node-name=disk2,read-only=on');
    expect(args).toContain('driver=qcow2,file=file1,node-name=disk1');
  });

  it('leaves hot-pluggable disks beyond the ports on the root complex', () => {
    const many = Array.from({ length: HOTPLUG_PORTS + 1 }, (_, i) => ({
      name: `vd-${i}`,
      file: `/${i}`,
      format: 'raw' as const,
      cdrom: false,
      hotpluggable: true,
    }));
    const ports = coldPlugPorts(many);
    expect(ports.size).toBe(HOTPLUG_PORTS);
    expect(ports.get(`vd-${HOTPLUG_PORTS}`)).toBeUndefined();
  });
});
