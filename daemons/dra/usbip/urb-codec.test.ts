import { describe, expect, it } from '@jest/globals';
import { UsbipProtocolError } from './protocol.js';
import { cmdSubmit, decodeUrb, DIR_IN, DIR_OUT, encodeUrb, retSubmit, type UrbMessage } from './urb-codec.js';

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');
const DEVICE_DESCRIPTOR = hex('12010002 00000040 6d042bc5 11120102 0301');

/** GET_DESCRIPTOR(DEVICE) on ep0, IN, 18 bytes, as vhci sends it for device 3-2. */
const GET_DESCRIPTOR = cmdSubmit({
  seqnum: 1,
  devid: 0x00030002,
  direction: DIR_IN,
  transferFlags: 0x200,
  transferBufferLength: 18,
  setup: hex('8006000100001200'),
});
const GET_DESCRIPTOR_HEX =
  '00000001 00000001 00030002 00000001 00000000' + // command seqnum devid direction ep
  '00000200 00000012 00000000 00000000 00000000' + // flags length start_frame packets interval
  '8006000100001200'; // setup
const DESCRIPTOR_REPLY_HEX = '00000003 00000001 00000000 00000000 00000000' + '00000000 00000012 00000000 00000000 00000000' + '0000000000000000';

describe('URB encoding', () => {
  it('writes a CMD_SUBMIT for an IN control transfer without data', () => {
    expect(encodeUrb(GET_DESCRIPTOR)).toEqual(hex(GET_DESCRIPTOR_HEX));
  });

  it('writes the RET_SUBMIT with the IN data after the 48-byte header', () => {
    const reply = retSubmit({ seqnum: 1, actualLength: 18, data: DEVICE_DESCRIPTOR });
    expect(encodeUrb(reply)).toEqual(Buffer.concat([hex(DESCRIPTOR_REPLY_HEX), DEVICE_DESCRIPTOR]));
  });

  it('writes CMD_UNLINK and RET_UNLINK with -ECONNRESET', () => {
    const unlink: UrbMessage = { command: 'CMD_UNLINK', seqnum: 5, devid: 0x00030002, direction: DIR_OUT, ep: 0, unlinkSeqnum: 1 };
    expect(encodeUrb(unlink)).toEqual(hex('00000002 00000005 00030002 00000000 00000000 00000001' + '00'.repeat(24)));
    const ret: UrbMessage = { command: 'RET_UNLINK', seqnum: 5, devid: 0, direction: DIR_OUT, ep: 0, status: -104 };
    expect(encodeUrb(ret)).toEqual(hex('00000004 00000005 00000000 00000000 00000000 ffffff98' + '00'.repeat(24)));
  });

  it('writes an OUT bulk transfer with its data and an ISO transfer with its descriptors', () => {
    const out = cmdSubmit({ seqnum: 2, devid: 0x00030002, ep: 2, data: hex('deadbeef') });
    expect(encodeUrb(out)).toEqual(hex('00000001 00000002 00030002 00000000 00000002 00000000 00000004 00000000 00000000 00000000 0000000000000000 deadbeef'));
    const iso = cmdSubmit({
      seqnum: 3,
      ep: 1,
      data: hex('0102 0304'),
      numberOfPackets: 2,
      interval: 1,
      iso: [
        { offset: 0, length: 2, actualLength: 0, status: 0 },
        { offset: 2, length: 2, actualLength: 0, status: 0 },
      ],
    });
    const bytes = encodeUrb(iso);
    expect(bytes.length).toBe(48 + 4 + 32);
    expect(bytes.subarray(48)).toEqual(hex('01020304 00000000 00000002 00000000 00000000 00000002 00000002 00000000 00000000'));
  });

  it('refuses a message whose data disagrees with its header', () => {
    expect(() => encodeUrb(cmdSubmit({ seqnum: 1, transferBufferLength: 8, data: hex('00') }))).toThrow(UsbipProtocolError);
    expect(() => encodeUrb(cmdSubmit({ seqnum: 1, numberOfPackets: 3 }))).toThrow('number_of_packets 3 but 0 ISO descriptors');
  });
});

describe('URB decoding', () => {
  it('reads a CMD_SUBMIT back as it was written', () => {
    expect(decodeUrb(hex(GET_DESCRIPTOR_HEX))).toEqual({ kind: 'ok', value: GET_DESCRIPTOR, length: 48 });
  });

  it('takes the data of a RET_SUBMIT when the request it answers was IN, though the reply says direction 0', () => {
    const bytes = Buffer.concat([hex(DESCRIPTOR_REPLY_HEX), DEVICE_DESCRIPTOR]);
    const result = decodeUrb(bytes, 0, { directionOf: (seqnum) => (seqnum === 1 ? DIR_IN : undefined) });
    expect(result.kind).toBe('ok');
    if (result.kind !== 'ok' || result.value.command !== 'RET_SUBMIT') throw new Error('expected RET_SUBMIT');
    expect(result.value.data).toEqual(DEVICE_DESCRIPTOR);
    expect(result.length).toBe(66);
    // Without knowing the request, a direction-0 reply carries no data.
    expect(decodeUrb(bytes)).toMatchObject({ kind: 'ok', length: 48 });
  });

  it('decodes consecutive messages from one buffer at an offset', () => {
    const a = encodeUrb(cmdSubmit({ seqnum: 7, data: hex('aa') }));
    const b = encodeUrb(cmdSubmit({ seqnum: 8, direction: DIR_IN, transferBufferLength: 64 }));
    const both = Buffer.concat([a, b]);
    const first = decodeUrb(both);
    expect(first).toMatchObject({ kind: 'ok', length: 49, value: { seqnum: 7 } });
    expect(decodeUrb(both, 49)).toMatchObject({ kind: 'ok', length: 48, value: { seqnum: 8, transferBufferLength: 64 } });
  });

  it('accepts both non-ISO packet counts seen on the wire (0 and 0xffffffff)', () => {
    const bytes = hex(GET_DESCRIPTOR_HEX);
    bytes.writeUInt32BE(0xffffffff, 0x20);
    expect(decodeUrb(bytes)).toMatchObject({ kind: 'ok', length: 48, value: { numberOfPackets: -1, iso: [] } });
  });

  it('asks for the rest of a truncated header, data or descriptor list', () => {
    expect(decodeUrb(hex('00000001 0000'))).toEqual({ kind: 'short', need: 48 });
    const out = encodeUrb(cmdSubmit({ seqnum: 2, data: Buffer.alloc(100) }));
    expect(decodeUrb(out.subarray(0, 60))).toEqual({ kind: 'short', need: 148 });
  });

  it('names an unknown command, a bad direction, a negative length and a huge one', () => {
    const problem = (bytes: Buffer): string | undefined => {
      const r = decodeUrb(bytes);
      return r.kind === 'bad' ? r.error.message : undefined;
    };
    const base = (): Buffer => hex(GET_DESCRIPTOR_HEX);
    const unknown = base();
    unknown.writeUInt32BE(9, 0);
    expect(problem(unknown)).toBe('unknown URB command 0x0009');
    const direction = base();
    direction.writeUInt32BE(2, 12);
    expect(problem(direction)).toBe('URB direction 2 (0 out, 1 in)');
    const negative = base();
    negative.writeUInt32BE(0, 12);
    negative.writeInt32BE(-5, 0x18);
    expect(problem(negative)).toBe('negative transfer_buffer_length -5');
    const huge = base();
    huge.writeUInt32BE(0, 12);
    huge.writeInt32BE(0x7fffffff, 0x18);
    expect(problem(huge)).toMatch(/^transfer_buffer_length 2147483647 over/);
    const packets = base();
    packets.writeUInt32BE(5000, 0x20);
    expect(problem(packets)).toBe('number_of_packets 5000 over 1024');
  });
});
