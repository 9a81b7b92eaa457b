/** VirtualMachine USB and GPU rules: one conforming and one violating case each. */
import { USBDeviceSchema } from '../../../../shared/api/resources/usb.js';
import type { World } from '../../testing/fake-lookups.js';
import { typed, vm, type VmIn } from '../../testing/objects.js';
import { ruleTable } from '../../testing/rule-table.js';
import { USBIP_ANNOTATIONS } from './devices.js';
import { DRA, vmWorld } from './fixtures.js';
import { virtualMachineValidator } from './index.js';

const withUsb = (...names: string[]): VmIn => vm((o) => void (o.spec.usbDevices = names.map((name) => ({ name }))));
const runningOn = (node: string, ...names: string[]): VmIn =>
  vm((o) => void ((o.spec.usbDevices = names.map((name) => ({ name }))), (o.status = { phase: 'Running', nodeName: node })));

function usbReady(w: World): void {
  w.apis.push(DRA);
  w.nodes.push({ name: 'node-a', addresses: ['192.168.0.10'], annotations: { [USBIP_ANNOTATIONS.total]: '4', [USBIP_ANNOTATIONS.highSpeedUsed]: '1' } });
  for (const [name, node, speed] of [
    ['token', 'node-b', 480],
    ['camera', 'node-b', 12],
    ['disk', 'node-a', 5000],
  ] as const) {
    w.usbDevices.push(
      USBDeviceSchema.parse({
        apiVersion: 'virtualization.deckhouse.io/v1alpha2',
        kind: 'USBDevice',
        metadata: { name, namespace: 'ns1' },
        status: { nodeName: node, attributes: { speed } },
      }),
    );
  }
}

ruleTable(virtualMachineValidator, vmWorld, [
  {
    rule: 'USB devices are not in CE',
    good: { object: withUsb('token'), world: usbReady },
    bad: { object: withUsb('token'), world: usbReady, facts: { edition: 'CE' } },
    expect: { deny: 'spec.usbDevices', message: /not available in the CE edition/ },
  },
  {
    rule: 'USB devices need dynamic resource allocation on Kubernetes 1.34 or newer',
    good: { object: withUsb('token'), world: usbReady },
    bad: { object: withUsb('token'), world: (w) => void (usbReady(w), (w.version = { major: 1, minor: 33 })) },
    expect: { deny: 'spec.usbDevices', message: /Kubernetes 1.34 or newer/ },
  },
  {
    rule: 'a USB device is listed once',
    good: { object: withUsb('token', 'disk'), world: usbReady },
    bad: { object: withUsb('token', 'token'), world: usbReady },
    expect: { deny: 'spec.usbDevices[1]', message: /already listed/ },
  },
  {
    rule: 'a USB device serves one VM',
    good: { object: withUsb('token'), world: (w) => void (usbReady(w), w.vms.push(typed.vm((o) => void (o.spec.usbDevices = [{ name: 'token' }])))) },
    bad: {
      object: withUsb('token'),
      world: (w) => void (usbReady(w), w.vms.push(typed.vm((o) => void ((o.metadata.name = 'vm2'), (o.spec.usbDevices = [{ name: 'token' }]))))),
    },
    expect: { deny: 'spec.usbDevices[0]', message: /already used by VirtualMachine vm2/ },
  },
  {
    rule: 'a USB device from another node has a USB/IP speed',
    good: { object: runningOn('node-a', 'token'), world: usbReady },
    bad: { object: runningOn('node-a', 'camera'), world: usbReady },
    expect: { deny: 'spec.usbDevices[0]', message: /speed 12 Mbit\/s, which USB\/IP does not support/ },
  },
  {
    rule: "a USB device from another node gets a free port on the VM's node",
    good: { object: runningOn('node-a', 'token'), world: usbReady },
    bad: {
      object: runningOn('node-a', 'token'),
      world: (w) =>
        void (
          usbReady(w),
          w.nodes[0] !== undefined && (w.nodes[0] = { ...w.nodes[0], annotations: { [USBIP_ANNOTATIONS.total]: '4', [USBIP_ANNOTATIONS.highSpeedUsed]: '2' } })
        ),
    },
    expect: { deny: 'spec.usbDevices[0]', message: /node node-a has no free USB\/IP port for USB device token from node node-b/ },
  },
  {
    rule: 'GPUs need the GPU feature gate',
    good: { object: vm((o) => void (o.spec.gpus = [{ gpuClassName: 'a100' }])), world: (w) => void (w.settings = { ...w.settings, featureGates: ['GPU'] }) },
    bad: { object: vm((o) => void (o.spec.gpus = [{ gpuClassName: 'a100' }])) },
    expect: { deny: 'spec.gpus', message: /GPU feature gate/ },
  },
]);
