import { describe, expect, it } from '@jest/globals';
import type { ResourceSlice } from '../../../../shared/api/k8s/resource.js';
import { attributesOf, claimTemplateSpec, nodeUSBDeviceName, sameAttributes, specHash, usbDevicesOf } from './attributes.js';

const slice = (driver: string, names: string[]): ResourceSlice => ({
  metadata: { name: 's' },
  spec: { driver, pool: { name: 'node-a', generation: 1, resourceSliceCount: 1 }, devices: names.map((name) => ({ name })) },
});

describe('USB attributes from slices', () => {
  it('takes only usb- devices of the virtualization-usb driver', () => {
    expect(usbDevicesOf(slice('virtualization-usb', ['usb-1', 'gpu-device-1'])).map((d) => d.name)).toEqual(['usb-1']);
    expect(usbDevicesOf(slice('gpu.example.com', ['usb-1']))).toEqual([]);
  });

  it('names the NodeUSBDevice in lower case with dots as dashes', () => {
    expect(nodeUSBDeviceName('usb-AB.cd')).toBe('usb-ab-cd');
  });

  it("copies the original's attribute set, the pool as node, the name attribute over the device name, not busID/path/usbAddress", () => {
    const attrs = attributesOf(
      {
        name: 'usb-x',
        attributes: {
          name: { string: 'usb-y' },
          vendorID: { string: '0529' },
          speed: { int: 480 },
          major: { int: 189 },
          busID: { string: '1-1' },
          path: { string: '/sys/bus/usb/devices/1-1' },
          usbAddress: { string: '001:002' },
        },
      },
      'node-a',
    );
    expect(attrs).toEqual({ nodeName: 'node-a', name: 'usb-y', vendorID: '0529', speed: 480, major: 189 });
  });

  it('compares attributes regardless of key order', () => {
    expect(sameAttributes({ a: 1, b: 'x' } as never, { b: 'x', a: 1 } as never)).toBe(true);
    expect(sameAttributes(undefined, { name: 'x' })).toBe(false);
  });
});

describe('the ResourceClaimTemplate of a USBDevice', () => {
  it('asks for exactly one device of the class whose name attribute matches, owned by uid/gid 64535', () => {
    const spec = claimTemplateSpec('usb-1', 'usb-1');
    expect(spec.spec.devices?.requests?.[0]?.exactly?.selectors).toEqual([{ cel: { expression: 'device.attributes["virtualization-usb"].name == "usb-1"' } }]);
    expect(spec.metadata?.annotations?.['usb.virtualization.deckhouse.io/device-user']).toBe('64535');
  });

  it('changes its hash when the selector drifts', () => {
    expect(specHash(claimTemplateSpec('usb-1', 'usb-1'))).toBe(specHash(claimTemplateSpec('usb-1', 'usb-1')));
    expect(specHash(claimTemplateSpec('usb-1', 'usb-2'))).not.toBe(specHash(claimTemplateSpec('usb-1', 'usb-1')));
  });
});
