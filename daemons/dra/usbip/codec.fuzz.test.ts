/**
 * Fuzzing the decoders: on any bytes they answer ok/short/bad and never throw; whatever they accept
 * encodes back to the same bytes; a valid message cut anywhere is `short`, never `ok` or a throw.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  decodeDevlistReply,
  decodeImportReply,
  decodeOpRequest,
  encodeDevlistReply,
  encodeImportReply,
  encodeImportRequest,
  type UsbipDevice,
} from './op-codec.js';
import { OpStatus, UsbipProtocolError, type Decoded } from './protocol.js';
import { decodeUrb, encodeUrb, type IsoDescriptor, type UrbMessage } from './urb-codec.js';

const RUNS = 2000;

function wellFormed<T>(result: Decoded<T>, input: Buffer): void {
  switch (result.kind) {
    case 'ok':
      expect(result.length).toBeGreaterThan(0);
      expect(result.length).toBeLessThanOrEqual(input.length);
      break;
    case 'short':
      expect(result.need).toBeGreaterThan(input.length);
      break;
    case 'bad':
      expect(result.error).toBeInstanceOf(UsbipProtocolError);
      expect(result.error.message.length).toBeGreaterThan(0);
      break;
  }
}

const u8 = fc.integer({ min: 0, max: 0xff });
const u16 = fc.integer({ min: 0, max: 0xffff });
const u32 = fc.integer({ min: 0, max: 0xffffffff });
const s32 = fc.integer({ min: -0x80000000, max: 0x7fffffff });
const busIdArb = fc.stringMatching(/^[0-9]{1,2}-[0-9](\.[0-9]){0,4}$/);

const deviceArb: fc.Arbitrary<UsbipDevice> = fc.record({
  path: fc.string({ maxLength: 100 }).map((s) => `/sys/devices/${s.replace(/\0/g, '')}`.slice(0, 200)),
  busId: busIdArb,
  busNum: u32,
  devNum: u32,
  speed: fc.integer({ min: 0, max: 6 }),
  idVendor: u16,
  idProduct: u16,
  bcdDevice: u16,
  bDeviceClass: u8,
  bDeviceSubClass: u8,
  bDeviceProtocol: u8,
  bConfigurationValue: u8,
  bNumConfigurations: u8,
  bNumInterfaces: u8,
});
const interfaceArb = fc.record({ bInterfaceClass: u8, bInterfaceSubClass: u8, bInterfaceProtocol: u8 });
const devlistArb = fc.array(fc.record({ device: deviceArb, interfaces: fc.array(interfaceArb, { maxLength: 8 }) }), { maxLength: 4 });

const isoArb = (n: number): fc.Arbitrary<IsoDescriptor[]> =>
  fc.array(fc.record({ offset: u32, length: u32, actualLength: u32, status: s32 }), { minLength: n, maxLength: n });
const basic = { seqnum: u32, devid: u32, ep: fc.integer({ min: 0, max: 15 }) };

const urbArb: fc.Arbitrary<UrbMessage> = fc.oneof(
  fc
    .record({
      ...basic,
      direction: fc.constantFrom(0 as const, 1 as const),
      data: fc.uint8Array({ maxLength: 64 }),
      packets: fc.integer({ min: 0, max: 4 }),
      flags: u32,
      setup: fc.uint8Array({ minLength: 8, maxLength: 8 }),
    })
    .chain((r) =>
      isoArb(r.packets).map((iso): UrbMessage => ({
        command: 'CMD_SUBMIT',
        seqnum: r.seqnum,
        devid: r.devid,
        direction: r.direction,
        ep: r.ep,
        transferFlags: r.flags,
        transferBufferLength: r.direction === 0 ? r.data.length : 512,
        startFrame: 0,
        numberOfPackets: r.packets,
        interval: 0,
        setup: Buffer.from(r.setup),
        data: r.direction === 0 ? Buffer.from(r.data) : Buffer.alloc(0),
        iso,
      })),
    ),
  fc.record({ ...basic, data: fc.uint8Array({ maxLength: 64 }), status: s32 }).map((r): UrbMessage => ({
    command: 'RET_SUBMIT',
    seqnum: r.seqnum,
    devid: r.devid,
    direction: 1,
    ep: r.ep,
    status: r.status,
    actualLength: r.data.length,
    startFrame: 0,
    numberOfPackets: 0,
    errorCount: 0,
    data: Buffer.from(r.data),
    iso: [],
  })),
  fc.record({ ...basic, unlinkSeqnum: u32 }).map((r): UrbMessage => ({ command: 'CMD_UNLINK', direction: 0, ...r })),
  fc.record({ ...basic, status: s32 }).map((r): UrbMessage => ({ command: 'RET_UNLINK', direction: 0, ...r })),
);

/** Random bytes, and valid messages with random bytes overwritten (reaches deeper than noise alone). */
function mutated(valid: fc.Arbitrary<Buffer>): fc.Arbitrary<Buffer> {
  return fc.oneof(
    fc.uint8Array({ maxLength: 2048 }).map((a) => Buffer.from(a)),
    fc.tuple(valid, fc.array(fc.tuple(fc.nat(), u8), { minLength: 1, maxLength: 8 }), fc.nat()).map(([buf, edits, cut]) => {
      const copy = Buffer.from(buf);
      for (const [pos, value] of edits) if (copy.length > 0) copy[pos % copy.length] = value;
      return copy.subarray(0, copy.length === 0 ? 0 : cut % (copy.length + 1));
    }),
  );
}

describe('decoders under fuzzing', () => {
  it('the server-side request decoder never throws', () => {
    const valid = busIdArb.map((b) => encodeImportRequest(b));
    fc.assert(
      fc.property(mutated(valid), (bytes) => wellFormed(decodeOpRequest(bytes), bytes)),
      { numRuns: RUNS },
    );
  });

  it('the devlist and import reply decoders never throw', () => {
    const validDevlist = devlistArb.map((d) => encodeDevlistReply(d));
    const validImport = deviceArb.map((device) => encodeImportReply({ status: OpStatus.OK, device }));
    fc.assert(
      fc.property(mutated(validDevlist), (bytes) => wellFormed(decodeDevlistReply(bytes), bytes)),
      { numRuns: RUNS },
    );
    fc.assert(
      fc.property(mutated(validImport), (bytes) => wellFormed(decodeImportReply(bytes), bytes)),
      { numRuns: RUNS },
    );
  });

  it('the URB decoder never throws, with or without a direction lookup', () => {
    const valid = urbArb.map((m) => encodeUrb(m));
    fc.assert(
      fc.property(mutated(valid), fc.boolean(), (bytes, lookup) => {
        wellFormed(decodeUrb(bytes, 0, lookup ? { directionOf: (s) => (s % 2 === 0 ? 0 : 1) } : {}), bytes);
      }),
      { numRuns: RUNS },
    );
  });
});

describe('round trips', () => {
  it('a devlist decodes to what was encoded (interface counts taken from the lists)', () => {
    fc.assert(
      fc.property(devlistArb, (entries) => {
        const decoded = decodeDevlistReply(encodeDevlistReply(entries));
        const expected = entries.map((e) => ({ device: { ...e.device, bNumInterfaces: e.interfaces.length }, interfaces: e.interfaces }));
        expect(decoded).toMatchObject({ kind: 'ok', value: expected });
      }),
      { numRuns: 300 },
    );
  });

  it('every URB message decodes to what was encoded, and every cut of it is short', () => {
    fc.assert(
      fc.property(urbArb, fc.nat(), (message, cut) => {
        const bytes = encodeUrb(message);
        const directionOf = (): 0 | 1 => message.direction;
        const decoded = decodeUrb(bytes, 0, { directionOf });
        expect(decoded).toEqual({ kind: 'ok', value: message, length: bytes.length });
        const truncated = decodeUrb(bytes.subarray(0, cut % bytes.length), 0, { directionOf });
        expect(truncated.kind).toBe('short');
      }),
      { numRuns: 1000 },
    );
  });
});
