/**
 * The simulated parts the DRA daemon needs in the local platform (`npm start`), where nodes are
 * kwok's and have neither USB devices nor a kubelet: a fixture sysfs tree with a few devices
 * (SIMULATED, made with the test helper) and kubelet/CDI dirs under the platform's work dir.
 * Unplug a device with `rm <sys>/bus/usb/devices/<busId>`; plug it back by recreating the symlink.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFixtureSysfs, type FixtureDevice } from '../../shared/testing/fixture-sysfs.js';

export const SIMULATED_USB_DEVICES: readonly FixtureDevice[] = [
  { busId: '1-1', devNum: 2, vendorId: '0529', productId: '0001', manufacturer: 'SIMULATED AKS', product: 'SIMULATED HASP HL key', serial: 'SIM-0001' },
  { busId: '1-2', devNum: 3, vendorId: '05e3', productId: '0608', deviceClass: '09', product: 'SIMULATED hub' },
  { busId: '1-2.1', devNum: 4, vendorId: '076b', productId: '3021', speed: '12', product: 'SIMULATED smart-card reader' },
  {
    busId: '2-1',
    devNum: 2,
    vendorId: '0403',
    productId: '6001',
    speed: '12',
    manufacturer: 'SIMULATED FTDI',
    product: 'SIMULATED serial adapter',
    serial: 'SIM-0002',
  },
];

/** Writes the simulated node under `dir` and returns the daemon's environment for it. */
export async function prepareSimulatedUsbNode(dir: string, nodeName: string): Promise<Record<string, string>> {
  const env = {
    NODE_NAME: nodeName,
    SYS_ROOT: join(dir, 'simulated-sys'),
    CDI_ROOT: join(dir, 'cdi'),
    KUBELET_PLUGINS_DIR: join(dir, 'kubelet-plugins'),
    KUBELET_REGISTRY_DIR: join(dir, 'kubelet-plugins-registry'),
    STATE_DIR: join(dir, 'state'),
  };
  await Promise.all([env.CDI_ROOT, env.KUBELET_PLUGINS_DIR, env.KUBELET_REGISTRY_DIR].map((d) => mkdir(d, { recursive: true })));
  await writeFixtureSysfs(env.SYS_ROOT, [...SIMULATED_USB_DEVICES]);
  return env;
}
