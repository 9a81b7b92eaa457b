import { describe, expect, it } from '@jest/globals';
import type { USBDevice } from '../../../../shared/api/resources/usb.js';
import { decideUsb, parseUsbAddress, usbReadyCondition, type UsbView } from './usb.js';

const ready: USBDevice = {
  apiVersion: 'virtualization.deckhouse.io/v1alpha2',
  kind: 'USBDevice',
  metadata: { namespace: 'ns', name: 'usb-a' },
  status: {
    nodeName: 'n1',
    attributes: { vendorID: '0529', productID: '0001', name: 'usb-a' },
    conditions: [{ type: 'Ready', status: 'True', reason: 'Ready', message: 'Device is ready to use.', lastTransitionTime: '2026-01-01T00:00:00Z' }],
  },
};
const notReady: USBDevice = {
  ...ready,
  status: {
    ...ready.status,
    conditions: [{ type: 'Ready', status: 'False', reason: 'NotFound', message: 'Device is absent on the host.', lastTransitionTime: '2026-01-01T00:00:00Z' }],
  },
};
const view = (over: Partial<UsbView> = {}): UsbView => ({
  name: 'usb-a',
  device: ready,
  templateExists: true,
  claimedBy: undefined,
  attachedTo: undefined,
  host: undefined,
  ...over,
});

describe('decideUsb', () => {
  const cases: Array<[string, UsbView, { attached?: boolean } | undefined, boolean, { entry: object; problem?: string; action: string; portBlocked?: true }]> =
    [
      ['a ready device of a running VM is attached', view(), undefined, true, { entry: { name: 'usb-a', attached: false, ready: true }, action: 'attach' }],
      ['a stopped VM only reports the device ready', view(), undefined, false, { entry: { name: 'usb-a', attached: false, ready: true }, action: 'none' }],
      [
        'the instance has it Ready: attached, with its address',
        view({ host: { phase: 'Ready', address: '0:3' } }),
        undefined,
        true,
        { entry: { name: 'usb-a', attached: true, ready: true, address: { bus: 0, port: 3 }, hotplugged: true }, action: 'none' },
      ],
      [
        'the instance has it but not Ready yet: still attaching',
        view({ host: { phase: 'AttachedToPod' } }),
        undefined,
        true,
        { entry: { name: 'usb-a', attached: false, ready: true }, action: 'attach' },
      ],
      [
        'unknown device: not found, nothing to detach',
        view({ device: undefined }),
        undefined,
        true,
        { entry: { name: 'usb-a', attached: false, ready: false }, problem: "USB device 'usb-a' not found in namespace ns", action: 'none' },
      ],
      [
        'unknown device that was attached: detached',
        view({ device: undefined }),
        { attached: true },
        true,
        { entry: { name: 'usb-a', attached: false, ready: false }, problem: "USB device 'usb-a' not found in namespace ns", action: 'detach' },
      ],
      [
        'not ready: its Ready message, detached when the instance still has it',
        view({ device: notReady, host: { phase: 'Ready' } }),
        undefined,
        true,
        {
          entry: { name: 'usb-a', attached: false, ready: false },
          problem: "USB device 'usb-a' is not ready: Device is absent on the host.",
          action: 'detach',
        },
      ],
      [
        'being deleted: detached',
        view({ device: { ...ready, metadata: { ...ready.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } } }),
        { attached: true },
        true,
        { entry: { name: 'usb-a', attached: false, ready: false }, problem: "USB device 'usb-a' is being deleted", action: 'detach' },
      ],
      [
        'claimed by another VM: in use, never attached or detached here',
        view({ claimedBy: 'ns/other' }),
        undefined,
        true,
        { entry: { name: 'usb-a', attached: false, ready: true }, problem: "USB device 'usb-a' is in use by VirtualMachine ns/other", action: 'none' },
      ],
      [
        'reported attached by another VM: in use',
        view({ attachedTo: 'ns/other' }),
        undefined,
        true,
        { entry: { name: 'usb-a', attached: false, ready: true }, problem: "USB device 'usb-a' is in use by VirtualMachine ns/other", action: 'none' },
      ],
      [
        'no template yet: waits for it',
        view({ templateExists: false }),
        undefined,
        true,
        {
          entry: { name: 'usb-a', attached: false, ready: true },
          problem: "USB device 'usb-a' has no ResourceClaimTemplate usb-a-template yet",
          action: 'none',
        },
      ],
      [
        'another node with no free USB/IP port: waits, nothing sent',
        view({ usbip: { node: 'n2', verdict: 'full' } }),
        undefined,
        true,
        {
          entry: { name: 'usb-a', attached: false, ready: true },
          problem: "USB device 'usb-a' cannot be attached: no free USB/IP port on node n2",
          action: 'none',
          portBlocked: true,
        },
      ],
      [
        'another node without USB/IP at all: waits, naming both nodes',
        view({ usbip: { node: 'n2', verdict: 'unknown' } }),
        undefined,
        true,
        {
          entry: { name: 'usb-a', attached: false, ready: true },
          problem: "USB device 'usb-a' cannot be attached: node n2 advertises no USB/IP ports (the device is on node n1)",
          action: 'none',
          portBlocked: true,
        },
      ],
      [
        'no port needed once the instance has the device',
        view({ usbip: { node: 'n2', verdict: 'full' }, host: { phase: 'Ready', address: '0:1' } }),
        undefined,
        true,
        { entry: { name: 'usb-a', attached: true, ready: true, address: { bus: 0, port: 1 }, hotplugged: true }, action: 'none' },
      ],
    ];
  it.each(cases)('%s', (_, v, previous, running, expected) => {
    const d = decideUsb(v, previous === undefined ? undefined : { name: 'usb-a', ready: true, attached: previous.attached ?? false }, running, 'ns');
    expect(d).toEqual({ problem: undefined, ...expected });
  });

  it('a device without vendor, product or node is not ready even with Ready=True', () => {
    const bare: USBDevice = { ...ready, status: { ...ready.status, nodeName: '' } };
    expect(decideUsb(view({ device: bare }), undefined, true, 'ns').action).toBe('none');
    expect(decideUsb(view({ device: bare }), undefined, true, 'ns').problem).toBe("USB device 'usb-a' is not ready: Device is ready to use.");
  });
});

describe('parseUsbAddress', () => {
  it.each([
    ['0:2', { bus: 0, port: 2 }],
    [' 1 : 7 ', { bus: 1, port: 7 }],
  ])('reads %j', (text, expected) => expect(parseUsbAddress(text)).toEqual(expected));

  it.each(['', '0-', ':2', '1:', 'a:b', '1:2:3', '-1:2', '1.5:2', '9'.repeat(12) + ':1', undefined])('gives no address for %j', (text) =>
    expect(parseUsbAddress(text)).toBeUndefined(),
  );
});

describe('usbReadyCondition with failed calls', () => {
  it('adds each failed call to the problems, also when no device is named any more', () => {
    const ok = decideUsb(view(), undefined, true, 'ns');
    const failed = ["USB device 'usb-a': addresourceclaim failed: boom"];
    expect(usbReadyCondition([ok], failed)).toEqual({ status: 'False', reason: 'SomeDevicesNotReady', message: failed[0] });
    expect(usbReadyCondition([], ["USB device 'usb-z': removeresourceclaim failed: boom"])?.status).toBe('False');
  });
});

describe('usbReadyCondition', () => {
  it('is absent without devices, True when all are usable, False naming every problem', () => {
    expect(usbReadyCondition([])).toBeUndefined();
    const ok = decideUsb(view(), undefined, true, 'ns');
    expect(usbReadyCondition([ok])).toEqual({ status: 'True', reason: 'USBDeviceReady', message: 'All USB devices are ready' });
    const lost = decideUsb(view({ name: 'usb-b', device: undefined }), undefined, true, 'ns');
    const busy = decideUsb(view({ claimedBy: 'ns/x' }), undefined, true, 'ns');
    expect(usbReadyCondition([ok, lost, busy])).toEqual({
      status: 'False',
      reason: 'SomeDevicesNotReady',
      message: "USB device 'usb-b' not found in namespace ns; USB device 'usb-a' is in use by VirtualMachine ns/x",
    });
  });
});
