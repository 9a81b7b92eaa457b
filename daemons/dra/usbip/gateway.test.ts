import { describe, expect, it } from '@jest/globals';
import {
  ADDRESS_ANNOTATION,
  GATEWAY_NODE_LABEL,
  HS_FREE_LABEL,
  nodeMarks,
  parseAddress,
  planDevices,
  SS_FREE_LABEL,
  type PlanInput,
  type PublishedDevice,
} from './gateway.js';
import { VDEV_ST_NULL, VDEV_ST_USED, type VhciHub, type VhciPort } from './kernel-import.js';

const DRIVER = 'virtualization-usb';
const port = (hub: VhciHub, n: number, used = false): VhciPort => ({
  hub,
  port: n,
  status: used ? VDEV_ST_USED : VDEV_ST_NULL,
  speed: used ? 3 : 0,
  devid: 0,
  sockfd: 0,
  localBusId: used ? `7-${n + 1}` : '0-0',
});
const published = (pool: string, name: string, busId: string | undefined, speed = 480): PublishedDevice => ({
  pool,
  name,
  attributes: { ...(busId === undefined ? {} : { busID: { string: busId } }), speed: { int: speed } },
});

const base: PlanInput = {
  nodeName: 'node-b',
  driver: DRIVER,
  results: [],
  published: [
    published('node-a', 'usb-a1', '3-2'),
    published('node-a', 'usb-a2', '4-1', 5000),
    published('node-b', 'usb-b1', '1-1'),
    published('node-c', 'usb-c1', undefined),
  ],
  addresses: new Map([
    ['node-a', '10.0.0.1:3240'],
    ['node-c', '10.0.0.3:3240'],
    ['node-d', 'nonsense'],
  ]),
  ports: [port('hs', 0), port('hs', 1), port('ss', 2)],
  attached: new Set(),
};
const result = (pool: string, device: string, driver = DRIVER): { request: string; driver: string; pool: string; device: string } => ({
  request: 'usb',
  driver,
  pool,
  device,
});

describe('planDevices: who exports, who imports', () => {
  it("uses a device of this node's pool locally and imports one of another pool from that node", () => {
    const plans = planDevices({ ...base, results: [result('node-b', 'usb-b1'), result('node-a', 'usb-a1')] });
    expect(plans).toEqual([
      { kind: 'local', device: 'usb-b1' },
      { kind: 'import', device: 'usb-a1', exportNode: 'node-a', host: '10.0.0.1', port: 3240, busId: '3-2', hub: 'hs' },
    ]);
  });

  it('sends a SuperSpeed device to the ss hub', () => {
    expect(planDevices({ ...base, results: [result('node-a', 'usb-a2')] })).toMatchObject([{ kind: 'import', hub: 'ss', busId: '4-1' }]);
  });

  it("ignores other drivers' devices and a device listed twice", () => {
    expect(
      planDevices({ ...base, results: [result('node-a', 'gpu-0', 'gpu.example.com'), result('node-a', 'usb-a1'), result('node-a', 'usb-a1')] }),
    ).toHaveLength(1);
  });

  it('refuses with a reason per device: unpublished, no busID, no or bad address', () => {
    const plans = planDevices({
      ...base,
      published: [...base.published, published('node-e', 'usb-e1', '1-1'), published('node-d', 'usb-d1', '2-1')],
      results: [result('node-a', 'usb-gone'), result('node-c', 'usb-c1'), result('node-e', 'usb-e1'), result('node-d', 'usb-d1')],
    });
    expect(plans.map((p) => (p.kind === 'refuse' ? p.reason : p.kind))).toEqual([
      'device usb-gone is not published in pool node-a (unplugged, or its node is gone)',
      'device usb-c1 of pool node-c has no busID attribute',
      `node node-e advertises no USB/IP address (annotation ${ADDRESS_ANNOTATION})`,
      'node node-d advertises an invalid USB/IP address "nonsense"',
    ]);
  });

  it('counts free ports per hub over the claim and refuses what no longer fits', () => {
    const plans = planDevices({
      ...base,
      published: [...base.published, published('node-a', 'usb-a3', '3-3'), published('node-a', 'usb-a4', '3-4')],
      results: [result('node-a', 'usb-a1'), result('node-a', 'usb-a3'), result('node-a', 'usb-a4')],
    });
    expect(plans.map((p) => p.kind)).toEqual(['import', 'import', 'refuse']);
    expect(plans[2]).toMatchObject({ reason: 'no free vhci port on the high-speed hub of node node-b' });
  });

  it('needs no port for a device already attached here (prepare is retried)', () => {
    const plans = planDevices({
      ...base,
      ports: [port('hs', 0, true), port('hs', 1, true), port('ss', 2)],
      attached: new Set(['usb-a1']),
      results: [result('node-a', 'usb-a1')],
    });
    expect(plans).toMatchObject([{ kind: 'import', device: 'usb-a1' }]);
  });
});

describe('parseAddress', () => {
  it('reads host:port with IPv4, a DNS name and a bracketed IPv6 address', () => {
    expect(parseAddress('10.0.0.1:3240')).toEqual({ host: '10.0.0.1', port: 3240 });
    expect(parseAddress('node-a.example:4280')).toEqual({ host: 'node-a.example', port: 4280 });
    expect(parseAddress('[fd00::1]:3240')).toEqual({ host: 'fd00::1', port: 3240 });
  });

  it('refuses what is not host:port', () => {
    for (const bad of ['', '10.0.0.1', '10.0.0.1:0', '10.0.0.1:70000', 'a b:1', 'fd00::1:3240']) expect(parseAddress(bad)).toBeUndefined();
  });
});

describe('nodeMarks: what a node advertises about its vhci ports', () => {
  it('says `any` with both hub labels while both hubs have a free port, and counts the used ones', () => {
    const marks = nodeMarks({ nodeName: 'node-b', address: '10.0.0.2:3240', ports: [port('hs', 0, true), port('hs', 1), port('ss', 2), port('ss', 3, true)] });
    expect(marks.labels).toMatchObject({ [GATEWAY_NODE_LABEL]: 'any', [HS_FREE_LABEL]: 'true', [SS_FREE_LABEL]: 'true' });
    expect(marks.annotations).toEqual({
      [ADDRESS_ANNOTATION]: '10.0.0.2:3240',
      'usb.virtualization.deckhouse.io/usbip-total-ports': '4',
      'usb.virtualization.deckhouse.io/usbip-used-ports': '2',
      'usb.virtualization.deckhouse.io/usbip-high-speed-hub-used-ports': '1',
      'usb.virtualization.deckhouse.io/usbip-super-speed-hub-used-ports': '1',
    });
  });

  it('names itself (no new devices) and removes the label of a full hub', () => {
    const marks = nodeMarks({ nodeName: 'node-b', address: '10.0.0.2:3240', ports: [port('hs', 0, true), port('ss', 1)] });
    expect(marks.labels).toMatchObject({ [GATEWAY_NODE_LABEL]: 'node-b', [HS_FREE_LABEL]: null, [SS_FREE_LABEL]: 'true' });
    expect(nodeMarks({ nodeName: 'node-b', address: 'x:1', ports: [port('hs', 0, true), port('ss', 1)], partitionable: true }).labels[GATEWAY_NODE_LABEL]).toBe(
      'any',
    );
  });
});
