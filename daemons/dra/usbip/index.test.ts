import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { z } from 'zod';
import { parseConfig } from '../../../shared/config/index.js';
import { Registry } from '../../../shared/metrics/index.js';
import type { ResourceClient } from '../../../shared/kube/index.js';
import { writeFixtureSysfs } from '../discovery/index.js';
import type { Node } from '../../../shared/api/k8s/resource.js';
import { listRemote } from './client.js';
import { GATEWAY_NODE_LABEL, HS_FREE_LABEL } from './gateway.js';
import { startUsbipGateway, usbipConfigShape, type UsbipGateway } from './index.js';

const log = pino({ level: 'silent' });
let dir: string;
let gateway: UsbipGateway | undefined;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'usbip-gateway-'));
  await writeFixtureSysfs(join(dir, 'sys'), [{ busId: '3-2', busNum: 3, devNum: 2, vendorId: '046d', productId: 'c52b' }]);
});
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
  await rm(dir, { recursive: true, force: true });
});

function config(
  env: Record<string, string>,
): ReturnType<typeof parseConfig<z.ZodObject<typeof usbipConfigShape>>> & { SYS_ROOT: string; NODE_NAME: string; STATE_DIR: string } {
  return {
    ...parseConfig(z.object(usbipConfigShape), { USBIP_PORT: '0', USBIP_HOST: '127.0.0.1', ...env }),
    SYS_ROOT: join(dir, 'sys'),
    STATE_DIR: join(dir, 'state'),
    NODE_NAME: 'node-b',
  };
}

describe('usbip config', () => {
  it('defaults: disabled, port 3240, real kernel, no secret, no anonymous devlist', () => {
    const defaults = parseConfig(z.object(usbipConfigShape), {});
    expect(defaults.USBIP_SECRET_FILE).toBeUndefined();
    expect(defaults).toMatchObject({
      USBIP_ENABLED: false,
      USBIP_PORT: 3240,
      USBIP_KERNEL: 'sysfs',
      USBIP_ANONYMOUS_DEVLIST: false,
      USBIP_REQUEST_TIMEOUT: 10_000,
    });
  });

  it('reports a relative secret path and an unknown kernel mode together', () => {
    expect(() => parseConfig(z.object(usbipConfigShape), { USBIP_SECRET_FILE: 'secret', USBIP_KERNEL: 'magic' })).toThrow(
      /USBIP_SECRET_FILE.*USBIP_KERNEL|USBIP_KERNEL.*USBIP_SECRET_FILE/,
    );
  });
});

describe('startUsbipGateway (simulated kernel)', () => {
  it('serves devlists with the secret from its file and marks the node with its address and free ports', async () => {
    const secretFile = join(dir, 'secret');
    await writeFile(secretFile, `${'k'.repeat(40)}\n`);
    const patches: unknown[] = [];
    const nodes = { mergePatch: (ref: unknown, patch: unknown) => Promise.resolve(void patches.push({ ref, patch })) } as unknown as ResourceClient<Node>;
    gateway = await startUsbipGateway({
      config: config({ USBIP_KERNEL: 'simulated', USBIP_SECRET_FILE: secretFile, USBIP_ADVERTISE_HOST: '10.0.0.2' }),
      log,
      registry: new Registry(),
      nodes,
    });
    const list = await listRemote({ host: '127.0.0.1', port: gateway.server.port, secret: Buffer.from('k'.repeat(40)) });
    expect(list.map((e) => e.device.busId)).toEqual(['3-2']);
    const marks = await gateway.mark();
    expect(marks?.labels).toMatchObject({ [GATEWAY_NODE_LABEL]: 'any', [HS_FREE_LABEL]: 'true' });
    expect(marks?.annotations['usb.virtualization.deckhouse.io/usbip-address']).toBe(`10.0.0.2:${gateway.server.port}`);
    expect(patches).toHaveLength(1); // the first tick wrote; an unchanged mark writes nothing
    expect(patches[0]).toMatchObject({ ref: { name: 'node-b' }, patch: { metadata: { labels: { 'usb-gateway': 'true' } } } });
  });

  it('refuses to start with a secret shorter than 32 bytes', async () => {
    const secretFile = join(dir, 'short');
    await writeFile(secretFile, 'short');
    await expect(
      startUsbipGateway({ config: config({ USBIP_KERNEL: 'simulated', USBIP_SECRET_FILE: secretFile }), log, registry: new Registry() }),
    ).rejects.toThrow('at least 32 needed');
  });
});
