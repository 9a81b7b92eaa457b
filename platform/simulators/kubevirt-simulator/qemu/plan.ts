/**
 * From an instance's spec to a QEMU command line (pure): CPU count, memory (capped locally, the cap
 * reported), the disks in the order KubeVirt gives them with their boot order, and the sockets of the
 * serial console, QMP, the guest agent channel and VNC in the guest's work directory.
 */
import { join } from 'node:path';
import { parseQuantity } from '../../../../shared/api/k8s/quantity.js';
import type { InternalVirtualMachineInstance } from '../../../../shared/api/internal/resources.js';

export type Accel = 'kvm' | 'tcg';

export interface GuestDisk {
  /** The volume's name in the instance. */
  readonly name: string;
  readonly file: string;
  readonly format: 'raw' | 'qcow2';
  readonly cdrom: boolean;
  readonly bootOrder?: number | undefined;
  /** A hot-plugged volume (`hotpluggable: true`): it sits on a hot-plug port, so it can be unplugged. */
  readonly hotpluggable?: boolean | undefined;
  /** Read-only (a hot-plugged image's claim). */
  readonly readOnly?: boolean | undefined;
}

/**
 * PCIe root ports every guest gets for hot-plugged disks (`hp0` …): on q35 a device on the root
 * complex cannot be unplugged, one on a root port can (the guest kernel's ACPI/PCIe hot-plug).
 */
export const HOTPLUG_PORTS = 8;
export const hotplugPort = (i: number): string => `hp${i}`;

export interface GuestPlan {
  readonly cpus: number;
  /** What the spec asks for, MiB. */
  readonly memoryMiB: number;
  /** What the guest gets here: min(asked, cap). */
  readonly givenMiB: number;
  readonly capped: boolean;
  readonly disks: readonly GuestDisk[];
}

/** The sockets and logs of one guest, all inside its work directory. */
export function guestFiles(dir: string): { serial: string; serialLog: string; qmp: string; agent: string; vnc: string; biosLog: string } {
  return {
    serial: join(dir, 'serial.sock'),
    serialLog: join(dir, 'serial.log'),
    qmp: join(dir, 'qmp.sock'),
    agent: join(dir, 'agent.sock'),
    vnc: join(dir, 'vnc.sock'),
    biosLog: join(dir, 'bios.log'),
  };
}

type Domain = {
  cpu?: { cores?: number; sockets?: number; threads?: number };
  memory?: { guest?: string | number };
  resources?: { requests?: { memory?: string | number } };
};
type DiskSpec = { name: string; bootOrder?: number; cdrom?: unknown };
type DiskFile = Omit<GuestDisk, 'cdrom' | 'bootOrder'>;

/** CPU count and memory the spec asks for (KubeVirt: cores x sockets x threads; memory.guest or the request; 1 CPU and 128 MiB when absent). */
export function guestPlan(vmi: InternalVirtualMachineInstance, disks: readonly DiskFile[], capMiB: number): GuestPlan {
  const domain = vmi.spec.domain as Domain;
  const cpu = domain.cpu ?? {};
  const cpus = Math.max(1, (cpu.cores ?? 1) * (cpu.sockets ?? 1) * (cpu.threads ?? 1));
  const bytes = parseQuantity(domain.memory?.guest ?? domain.resources?.requests?.memory) ?? 128 * 1024 * 1024;
  const memoryMiB = Math.max(1, Math.ceil(bytes / (1024 * 1024)));
  const specDisks = (vmi.spec.domain.devices?.['disks'] ?? []) as DiskSpec[];
  const ordered = specDisks.flatMap((d) => {
    const file = disks.find((f) => f.name === d.name);
    return file === undefined ? [] : [{ ...file, cdrom: d.cdrom !== undefined, bootOrder: d.bootOrder }];
  });
  return { cpus, memoryMiB, givenMiB: Math.min(memoryMiB, capMiB), capped: memoryMiB > capMiB, disks: ordered };
}

/**
 * The QEMU argv (without the program) for a plan, its work directory and the accelerator; `incoming`:
 * a migration target, which waits for `migrate-incoming` (the listening address is chosen then).
 */
export function qemuArgs(plan: GuestPlan, dir: string, accel: Accel, name: string, incoming = false): string[] {
  const f = guestFiles(dir);
  const args = [
    '-name',
    `guest=${name}`,
    '-machine',
    `q35,accel=${accel}`,
    '-smp',
    String(plan.cpus),
    '-m',
    `${plan.givenMiB}M`,
    '-nodefaults',
    '-no-user-config',
    '-display',
    'none',
    '-vnc',
    `unix:${f.vnc}`,
    '-device',
    'VGA',
    '-chardev',
    `socket,id=serial0,path=${f.serial},server=on,wait=off,logfile=${f.serialLog}`,
    '-serial',
    'chardev:serial0',
    '-qmp',
    `unix:${f.qmp},server=on,wait=off`,
    '-chardev',
    `socket,id=agent0,path=${f.agent},server=on,wait=off`,
    '-device',
    'virtio-serial-pci,id=virtio-serial0',
    '-device',
    'virtserialport,chardev=agent0,name=org.qemu.guest_agent.0',
    // SeaBIOS's own messages ("No bootable device.") on the debug port.
    '-chardev',
    `file,id=bios0,path=${f.biosLog}`,
    '-device',
    'isa-debugcon,iobase=0x402,chardev=bios0',
    '-netdev',
    'user,id=net0',
    '-device',
    'virtio-net-pci,netdev=net0',
  ];
  for (let i = 0; i < HOTPLUG_PORTS; i++) args.push('-device', `pcie-root-port,id=${hotplugPort(i)},bus=pcie.0,chassis=${i + 1}`);
  if (incoming) args.push('-incoming', 'defer');
  // With a boot order only the disks that have one boot (KubeVirt's libvirt domain does the same).
  if (plan.disks.some((d) => d.bootOrder !== undefined)) args.push('-boot', 'strict=on');
  const ports = coldPlugPorts(plan.disks);
  plan.disks.forEach((d, i) => {
    const boot = d.bootOrder === undefined ? '' : `,bootindex=${d.bootOrder}`;
    const readOnly = d.cdrom || d.readOnly === true ? ',read-only=on' : '';
    const port = ports.get(d.name);
    args.push('-blockdev', `driver=file,filename=${d.file},node-name=file${i}${readOnly}`);
    args.push('-blockdev', `driver=${d.format},file=file${i},node-name=disk${i}${readOnly}`);
    args.push(
      '-device',
      d.cdrom ? `ide-cd,drive=disk${i},id=${d.name}${boot}` : `virtio-blk-pci,drive=disk${i},id=${d.name}${port === undefined ? '' : `,bus=${port}`}${boot}`,
    );
  });
  return args;
}

/**
 * The hot-plug port of each hot-pluggable disk the guest starts with (a VM started with attachments,
 * a migration target), in the order of the disks; more than there are ports stay on the root complex.
 */
export function coldPlugPorts(disks: readonly GuestDisk[]): Map<string, string> {
  const plugged = disks.filter((d) => d.hotpluggable === true && !d.cdrom).slice(0, HOTPLUG_PORTS);
  return new Map(plugged.map((d, i) => [d.name, hotplugPort(i)]));
}
