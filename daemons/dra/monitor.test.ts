import { afterEach, describe, expect, it, jest } from '@jest/globals';
import pino from 'pino';
import type { ScanResult, UsbDeviceInfo } from './discovery/index.js';
import { DeviceMonitor } from './monitor.js';
import { waitFor } from '../../shared/testing/wait.js';

const device = (busId: string): UsbDeviceInfo => ({
  busId,
  sysPath: `/sys/bus/usb/devices/${busId}`,
  realPath: '',
  busNum: 1,
  devNum: 2,
  vendorId: '0001',
  productId: '0002',
  bcdDevice: '0100',
  speed: '480',
  deviceClass: '00',
  deviceSubClass: '00',
  deviceProtocol: '00',
  configurationValue: 1,
  numConfigurations: 1,
  numInterfaces: 0,
  interfaces: [],
  devicePath: '/dev/bus/usb/001/002',
  viaVhci: false,
});

/** A scan function whose result the test sets; counts calls. */
function fakeScan(): { scan: () => Promise<ScanResult>; set: (r: ScanResult) => void; calls: () => number } {
  let result: ScanResult = { devices: [], skipped: [], ignored: [] };
  let calls = 0;
  return {
    scan: () => {
      calls++;
      return Promise.resolve(result);
    },
    set: (r) => (result = r),
    calls: () => calls,
  };
}

let monitor: DeviceMonitor | undefined;
afterEach(async () => monitor?.stop());

describe('DeviceMonitor', () => {
  it('hands on the first scan and then only changed device lists', async () => {
    const fake = fakeScan();
    const onChange = jest.fn(() => Promise.resolve());
    monitor = new DeviceMonitor({ sysRoot: '/nonexistent', debounceMs: 10, pollMs: 3_600_000, log: pino({ level: 'silent' }), onChange, scan: fake.scan });
    await monitor.start();
    expect(onChange).toHaveBeenCalledTimes(1);
    await monitor.rescan();
    expect(onChange).toHaveBeenCalledTimes(1);
    fake.set({ devices: [device('1-1')], skipped: [], ignored: [] });
    await monitor.rescan();
    expect(onChange).toHaveBeenCalledTimes(2);
  });

  it('coalesces triggers within the debounce window into one scan', async () => {
    const fake = fakeScan();
    monitor = new DeviceMonitor({
      sysRoot: '/nonexistent',
      debounceMs: 50,
      pollMs: 3_600_000,
      log: pino({ level: 'silent' }),
      onChange: () => undefined,
      scan: fake.scan,
    });
    await monitor.start();
    for (let i = 0; i < 10; i++) monitor.trigger();
    await waitFor('the debounced scan', () => fake.calls() === 2);
    expect(fake.calls()).toBe(2);
  });

  it('retries a failed hand-on at the next scan and logs a broken entry once', async () => {
    const fake = fakeScan();
    const warn = jest.fn();
    const log = { warn, debug: jest.fn(), info: jest.fn() } as unknown as pino.Logger;
    let fail = true;
    const onChange = jest.fn(() => (fail ? Promise.reject(new Error('apiserver down')) : Promise.resolve()));
    fake.set({ devices: [device('1-1')], skipped: [{ path: '/sys/bus/usb/devices/2-1', reason: 'idVendor: missing' }], ignored: [] });
    monitor = new DeviceMonitor({ sysRoot: '/nonexistent', debounceMs: 10, pollMs: 3_600_000, log, onChange, scan: fake.scan });
    await monitor.start();
    fail = false;
    await monitor.rescan();
    await monitor.rescan();
    expect(onChange).toHaveBeenCalledTimes(2);
    const skippedLines = warn.mock.calls.filter((c) => (c[1] as string).startsWith('USB device skipped'));
    expect(skippedLines).toHaveLength(1);
    expect(skippedLines[0]?.[0]).toEqual({ path: '/sys/bus/usb/devices/2-1', reason: 'idVendor: missing' });
  });
});
