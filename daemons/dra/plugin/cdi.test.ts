import { describe, expect, it } from '@jest/globals';
import { claimSpec, commonSpec, specFileName } from './cdi.js';

describe('CDI specs', () => {
  it('names files by vendor, class and id, as the CDI transient naming wants', () => {
    expect(specFileName('common')).toBe('dra.virtualization.deckhouse.io-usb_common.json');
  });

  it('gives the common device the node and driver names', () => {
    expect(commonSpec('n1', 'virtualization-usb').devices).toEqual([
      { name: 'common', containerEdits: { env: ['KUBERNETES_NODE_NAME=n1', 'DRA_RESOURCE_DRIVER_NAME=virtualization-usb'] } },
    ]);
  });

  it('leaves out major, minor, uid and gid when unknown, keeps the node path', () => {
    const spec = claimSpec('abc', [{ deviceName: 'usb-1f', devicePath: '/dev/bus/usb/002/003', usbAddress: '002:003' }]);
    expect(spec.devices[0]?.containerEdits.deviceNodes).toEqual([
      { path: '/dev/bus/usb/002/003', hostPath: '/dev/bus/usb/002/003', type: 'c', permissions: 'rwm' },
    ]);
    expect(spec.devices[0]?.containerEdits.env).toEqual([
      'DRA_USB_1f_RESOURCE_CLAIM=abc',
      'DRA_USB_CLAIM_UID_ABC=abc',
      'DRA_USB_DEVICE_NAME_USB-1F=usb-1f',
      'DRA_USB_CLAIM_UID_ABC_DEVICE_NAME=usb-1f',
      'DRA_USB_USB-1F_DEVICE_PATH=/dev/bus/usb/002/003',
      'DRA_USB_USB-1F_BUS_DEVICENUMBER=002:003',
    ]);
  });
});
