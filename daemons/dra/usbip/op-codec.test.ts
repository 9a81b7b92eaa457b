import { describe, expect, it } from '@jest/globals';
import {
  decodeDevlistReply,
  decodeImportReply,
  decodeOpRequest,
  encodeDevlistReply,
  encodeDevlistRequest,
  encodeImportReply,
  encodeImportRequest,
  type UsbipDevice,
} from './op-codec.js';
import { OpStatus, UsbipProtocolError } from './protocol.js';

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');
const nulPad = (text: string, size: number): string => Buffer.concat([Buffer.from(text), Buffer.alloc(size - text.length)]).toString('hex');

const DEVICE: UsbipDevice = {
  path: '/sys/devices/pci0000:00/0000:00:1d.1/usb3/3-2',
  busId: '3-2',
  busNum: 3,
  devNum: 2,
  speed: 2,
  idVendor: 0x046d,
  idProduct: 0xc52b,
  bcdDevice: 0x1211,
  bDeviceClass: 0,
  bDeviceSubClass: 0,
  bDeviceProtocol: 0,
  bConfigurationValue: 1,
  bNumConfigurations: 1,
  bNumInterfaces: 2,
};
/** The 312-byte record of DEVICE, written out field by field from the layout table. */
const DEVICE_HEX =
  nulPad(DEVICE.path, 256) +
  nulPad('3-2', 32) +
  '00000003' + // busnum
  '00000002' + // devnum
  '00000002' + // speed: full
  '046d c52b 1211'.replace(/ /g, '') + // idVendor idProduct bcdDevice
  '00 00 00 01 01 02'.replace(/ /g, ''); // class subclass protocol configValue numConfigs numInterfaces

describe('management request encoding', () => {
  it('writes OP_REQ_DEVLIST as the Linux client does', () => {
    expect(encodeDevlistRequest()).toEqual(hex('0111 8005 00000000'));
  });

  it('writes OP_REQ_IMPORT with a NUL-padded 32-byte busid', () => {
    expect(encodeImportRequest('1-2.3')).toEqual(hex('0111 8003 00000000' + nulPad('1-2.3', 32)));
  });

  it('refuses a busid that leaves no room for the terminating NUL', () => {
    expect(() => encodeImportRequest('x'.repeat(32))).toThrow(UsbipProtocolError);
  });
});

describe('management request decoding (server side)', () => {
  it('reads DEVLIST and IMPORT requests and says how many bytes they took', () => {
    expect(decodeOpRequest(hex('0111 8005 00000000'))).toEqual({ kind: 'ok', value: { op: 'devlist' }, length: 8 });
    expect(decodeOpRequest(hex('0111 8003 00000000' + nulPad('3-2', 32)))).toEqual({ kind: 'ok', value: { op: 'import', busId: '3-2' }, length: 40 });
  });

  it('asks for more bytes when a request is truncated', () => {
    expect(decodeOpRequest(hex('0111 80'))).toEqual({ kind: 'short', need: 8 });
    expect(decodeOpRequest(hex('0111 8003 00000000 332d'))).toEqual({ kind: 'short', need: 40 });
  });

  it('refuses another protocol version by name', () => {
    const result = decodeOpRequest(hex('0106 8005 00000000'));
    expect(result.kind).toBe('bad');
    if (result.kind !== 'bad') return;
    expect(result.error).toBeInstanceOf(UsbipProtocolError);
    expect(result.error.problem).toBe('version');
    expect(result.error.message).toBe('unsupported USB/IP version 0x0106 (expected 0x0111)');
  });

  it('refuses an unknown operation code and a busid without NUL', () => {
    const unknown = decodeOpRequest(hex('0111 8006 00000000'));
    expect(unknown.kind === 'bad' && unknown.error.problem).toBe('unknown-code');
    const unterminated = decodeOpRequest(Buffer.concat([hex('0111 8003 00000000'), Buffer.alloc(32, 0x31)]));
    expect(unterminated.kind === 'bad' && unterminated.error.message).toBe('import busid is not NUL-terminated within 32 bytes');
  });
});

describe('OP_REP_DEVLIST', () => {
  const interfaces = [
    { bInterfaceClass: 3, bInterfaceSubClass: 1, bInterfaceProtocol: 2 },
    { bInterfaceClass: 0xff, bInterfaceSubClass: 0, bInterfaceProtocol: 0 },
  ];
  const vector = hex('0111 0005 00000000 00000001' + DEVICE_HEX + '03010200 ff000000');

  it('encodes one device with its interface records byte for byte', () => {
    expect(encodeDevlistReply([{ device: DEVICE, interfaces }])).toEqual(vector);
  });

  it('decodes the same bytes back', () => {
    expect(decodeDevlistReply(vector)).toEqual({ kind: 'ok', value: [{ device: DEVICE, interfaces }], length: vector.length });
  });

  it('takes bNumInterfaces from the interface list so the client reads the right count', () => {
    const encoded = encodeDevlistReply([{ device: { ...DEVICE, bNumInterfaces: 0 }, interfaces }]);
    expect(encoded).toEqual(vector);
  });

  it('encodes an empty list as header and a zero count', () => {
    expect(encodeDevlistReply([])).toEqual(hex('0111 0005 00000000 00000000'));
  });

  it('asks for more bytes at every truncation point', () => {
    for (const cut of [3, 10, 100, 12 + 312, vector.length - 1]) {
      expect(decodeDevlistReply(vector.subarray(0, cut)).kind).toBe('short');
    }
  });

  it('refuses a device count no server sends instead of waiting for it', () => {
    const result = decodeDevlistReply(hex('0111 0005 00000000 ffffffff'));
    expect(result.kind === 'bad' && result.error.problem).toBe('too-large');
  });
});

describe('OP_REP_IMPORT', () => {
  it('encodes success as header plus the 312-byte record (320 bytes)', () => {
    const encoded = encodeImportReply({ status: OpStatus.OK, device: DEVICE });
    expect(encoded).toEqual(hex('0111 0003 00000000' + DEVICE_HEX));
    expect(encoded.length).toBe(320);
  });

  it('encodes a refusal as the 8-byte header alone', () => {
    expect(encodeImportReply({ status: OpStatus.DEV_BUSY })).toEqual(hex('0111 0003 00000002'));
  });

  it('decodes success and refusal', () => {
    expect(decodeImportReply(hex('0111 0003 00000000' + DEVICE_HEX))).toEqual({ kind: 'ok', value: { status: 0, device: DEVICE }, length: 320 });
    expect(decodeImportReply(hex('0111 0003 00000004'))).toEqual({ kind: 'ok', value: { status: OpStatus.NODEV }, length: 8 });
  });

  it('names a reply to the wrong request and a truncated record', () => {
    const wrong = decodeImportReply(hex('0111 0005 00000000'));
    expect(wrong.kind === 'bad' && wrong.error.message).toBe('expected OP_REP_IMPORT, got 0x0005');
    expect(decodeImportReply(hex('0111 0003 00000000' + DEVICE_HEX).subarray(0, 200))).toEqual({ kind: 'short', need: 320 });
  });
});
