/**
 * Management messages (protocols.md 4.2): OP_REQ/REP_DEVLIST and OP_REQ/REP_IMPORT. Pure functions
 * from typed values to bytes and back; see protocol.ts for the decoder contract.
 */
import {
  bad,
  BUSID_SIZE,
  DEVICE_RECORD_SIZE,
  hex16,
  INTERFACE_RECORD_SIZE,
  MAX_DEVLIST_DEVICES,
  ok,
  OP_HEADER_SIZE,
  OpCode,
  OpStatus,
  opStatusName,
  PATH_SIZE,
  short,
  USBIP_VERSION,
  UsbipProtocolError,
  type Decoded,
} from './protocol.js';

/** usbip_usb_device: the 312-byte device record. */
export interface UsbipDevice {
  readonly path: string;
  readonly busId: string;
  readonly busNum: number;
  readonly devNum: number;
  /** enum usb_device_speed: 0 unknown, 1 low, 2 full, 3 high, 4 wireless, 5 super, 6 super-plus. */
  readonly speed: number;
  readonly idVendor: number;
  readonly idProduct: number;
  readonly bcdDevice: number;
  readonly bDeviceClass: number;
  readonly bDeviceSubClass: number;
  readonly bDeviceProtocol: number;
  readonly bConfigurationValue: number;
  readonly bNumConfigurations: number;
  readonly bNumInterfaces: number;
}

export interface UsbipInterface {
  readonly bInterfaceClass: number;
  readonly bInterfaceSubClass: number;
  readonly bInterfaceProtocol: number;
}

export interface DevlistEntry {
  readonly device: UsbipDevice;
  readonly interfaces: readonly UsbipInterface[];
}

export interface OpHeader {
  readonly version: number;
  readonly code: number;
  readonly status: number;
}

export type OpRequest = { readonly op: 'devlist' } | { readonly op: 'import'; readonly busId: string };

export type ImportReply =
  { readonly status: typeof OpStatus.OK; readonly device: UsbipDevice } | { readonly status: Exclude<number, 0>; readonly device?: undefined };

// ---- header ----

export function encodeOpHeader(code: number, status: number): Buffer {
  const buf = Buffer.alloc(OP_HEADER_SIZE);
  buf.writeUInt16BE(USBIP_VERSION, 0);
  buf.writeUInt16BE(code, 2);
  buf.writeUInt32BE(status >>> 0, 4);
  return buf;
}

/** The 8-byte header; a version other than 0x0111 is `bad` (the Linux tools refuse it too). */
export function decodeOpHeader(buf: Buffer, at = 0): Decoded<OpHeader> {
  if (buf.length - at < OP_HEADER_SIZE) return short(at + OP_HEADER_SIZE);
  const version = buf.readUInt16BE(at);
  const code = buf.readUInt16BE(at + 2);
  const status = buf.readUInt32BE(at + 4);
  if (version !== USBIP_VERSION) {
    return bad('version', `unsupported USB/IP version ${hex16(version)} (expected ${hex16(USBIP_VERSION)})`);
  }
  return ok({ version, code, status }, OP_HEADER_SIZE);
}

// ---- NUL-padded strings ----

function writeFixedString(buf: Buffer, at: number, size: number, value: string, field: string): void {
  const bytes = Buffer.from(value, 'utf8');
  if (bytes.length >= size) throw new UsbipProtocolError('invalid-field', `${field} is ${bytes.length} bytes; at most ${size - 1} fit`);
  bytes.copy(buf, at);
}

/** A NUL-padded field: the text up to the first NUL; undefined when no NUL ends it. */
function readFixedString(buf: Buffer, at: number, size: number): string | undefined {
  const end = buf.indexOf(0, at);
  if (end === -1 || end >= at + size) return undefined;
  return buf.toString('utf8', at, end);
}

// ---- device record ----

export function writeDevice(buf: Buffer, at: number, d: UsbipDevice): void {
  buf.fill(0, at, at + DEVICE_RECORD_SIZE);
  writeFixedString(buf, at, PATH_SIZE, d.path, 'path');
  writeFixedString(buf, at + 0x100, BUSID_SIZE, d.busId, 'busid');
  buf.writeUInt32BE(d.busNum >>> 0, at + 0x120);
  buf.writeUInt32BE(d.devNum >>> 0, at + 0x124);
  buf.writeUInt32BE(d.speed >>> 0, at + 0x128);
  buf.writeUInt16BE(d.idVendor & 0xffff, at + 0x12c);
  buf.writeUInt16BE(d.idProduct & 0xffff, at + 0x12e);
  buf.writeUInt16BE(d.bcdDevice & 0xffff, at + 0x130);
  const bytes = [d.bDeviceClass, d.bDeviceSubClass, d.bDeviceProtocol, d.bConfigurationValue, d.bNumConfigurations, d.bNumInterfaces];
  bytes.forEach((b, i) => buf.writeUInt8(b & 0xff, at + 0x132 + i));
}

export function readDevice(buf: Buffer, at: number): Decoded<UsbipDevice> {
  if (buf.length - at < DEVICE_RECORD_SIZE) return short(at + DEVICE_RECORD_SIZE);
  const path = readFixedString(buf, at, PATH_SIZE);
  if (path === undefined) return bad('invalid-field', 'device path is not NUL-terminated within 256 bytes');
  const busId = readFixedString(buf, at + 0x100, BUSID_SIZE);
  if (busId === undefined) return bad('invalid-field', 'device busid is not NUL-terminated within 32 bytes');
  return ok(
    {
      path,
      busId,
      busNum: buf.readUInt32BE(at + 0x120),
      devNum: buf.readUInt32BE(at + 0x124),
      speed: buf.readUInt32BE(at + 0x128),
      idVendor: buf.readUInt16BE(at + 0x12c),
      idProduct: buf.readUInt16BE(at + 0x12e),
      bcdDevice: buf.readUInt16BE(at + 0x130),
      bDeviceClass: buf.readUInt8(at + 0x132),
      bDeviceSubClass: buf.readUInt8(at + 0x133),
      bDeviceProtocol: buf.readUInt8(at + 0x134),
      bConfigurationValue: buf.readUInt8(at + 0x135),
      bNumConfigurations: buf.readUInt8(at + 0x136),
      bNumInterfaces: buf.readUInt8(at + 0x137),
    },
    DEVICE_RECORD_SIZE,
  );
}

// ---- requests (client -> server) ----

export function encodeDevlistRequest(): Buffer {
  return encodeOpHeader(OpCode.REQ_DEVLIST, 0);
}

export function encodeImportRequest(busId: string): Buffer {
  const buf = Buffer.alloc(OP_HEADER_SIZE + BUSID_SIZE);
  encodeOpHeader(OpCode.REQ_IMPORT, 0).copy(buf, 0);
  writeFixedString(buf, OP_HEADER_SIZE, BUSID_SIZE, busId, 'busid');
  return buf;
}

/** What a server reads first: DEVLIST (8 bytes) or IMPORT (40 bytes); any other code is `bad`. */
export function decodeOpRequest(buf: Buffer): Decoded<OpRequest> {
  const header = decodeOpHeader(buf);
  if (header.kind !== 'ok') return header;
  switch (header.value.code) {
    case OpCode.REQ_DEVLIST:
      return ok({ op: 'devlist' }, OP_HEADER_SIZE);
    case OpCode.REQ_IMPORT: {
      if (buf.length < OP_HEADER_SIZE + BUSID_SIZE) return short(OP_HEADER_SIZE + BUSID_SIZE);
      const busId = readFixedString(buf, OP_HEADER_SIZE, BUSID_SIZE);
      if (busId === undefined) return bad('invalid-field', 'import busid is not NUL-terminated within 32 bytes');
      return ok({ op: 'import', busId }, OP_HEADER_SIZE + BUSID_SIZE);
    }
    default:
      return bad('unknown-code', `unknown USB/IP operation ${hex16(header.value.code)}`);
  }
}

// ---- replies (server -> client) ----

export function encodeDevlistReply(entries: readonly DevlistEntry[]): Buffer {
  const size = entries.reduce((n, e) => n + DEVICE_RECORD_SIZE + e.interfaces.length * INTERFACE_RECORD_SIZE, OP_HEADER_SIZE + 4);
  const buf = Buffer.alloc(size);
  encodeOpHeader(OpCode.REP_DEVLIST, OpStatus.OK).copy(buf, 0);
  buf.writeUInt32BE(entries.length, OP_HEADER_SIZE);
  let at = OP_HEADER_SIZE + 4;
  for (const { device, interfaces } of entries) {
    // The client reads bNumInterfaces interface records: the count must match what follows.
    writeDevice(buf, at, { ...device, bNumInterfaces: interfaces.length });
    at += DEVICE_RECORD_SIZE;
    for (const i of interfaces) {
      buf.writeUInt8(i.bInterfaceClass & 0xff, at);
      buf.writeUInt8(i.bInterfaceSubClass & 0xff, at + 1);
      buf.writeUInt8(i.bInterfaceProtocol & 0xff, at + 2);
      at += INTERFACE_RECORD_SIZE;
    }
  }
  return buf;
}

export function decodeDevlistReply(buf: Buffer): Decoded<DevlistEntry[]> {
  const header = decodeOpHeader(buf);
  if (header.kind !== 'ok') return header;
  if (header.value.code !== OpCode.REP_DEVLIST) return bad('unexpected', `expected OP_REP_DEVLIST, got ${hex16(header.value.code)}`);
  if (header.value.status !== OpStatus.OK) return statusError('devlist', header.value.status);
  if (buf.length < OP_HEADER_SIZE + 4) return short(OP_HEADER_SIZE + 4);
  const count = buf.readUInt32BE(OP_HEADER_SIZE);
  if (count > MAX_DEVLIST_DEVICES) return bad('too-large', `devlist announces ${count} devices (at most ${MAX_DEVLIST_DEVICES})`);
  const entries: DevlistEntry[] = [];
  let at = OP_HEADER_SIZE + 4;
  for (let n = 0; n < count; n++) {
    const device = readDevice(buf, at);
    if (device.kind !== 'ok') return device;
    at += DEVICE_RECORD_SIZE;
    const end = at + device.value.bNumInterfaces * INTERFACE_RECORD_SIZE;
    if (buf.length < end) return short(end);
    const interfaces: UsbipInterface[] = [];
    for (; at < end; at += INTERFACE_RECORD_SIZE) {
      interfaces.push({ bInterfaceClass: buf.readUInt8(at), bInterfaceSubClass: buf.readUInt8(at + 1), bInterfaceProtocol: buf.readUInt8(at + 2) });
    }
    entries.push({ device: device.value, interfaces });
  }
  return ok(entries, at);
}

/** OK carries the device record (320 bytes); any other status is the 8-byte header alone. */
export function encodeImportReply(reply: ImportReply): Buffer {
  if (reply.device === undefined) return encodeOpHeader(OpCode.REP_IMPORT, reply.status);
  const buf = Buffer.alloc(OP_HEADER_SIZE + DEVICE_RECORD_SIZE);
  encodeOpHeader(OpCode.REP_IMPORT, OpStatus.OK).copy(buf, 0);
  writeDevice(buf, OP_HEADER_SIZE, reply.device);
  return buf;
}

/** A non-OK status decodes to `ok` with that status (the caller decides); only framing errors are `bad`. */
export function decodeImportReply(buf: Buffer): Decoded<ImportReply> {
  const header = decodeOpHeader(buf);
  if (header.kind !== 'ok') return header;
  if (header.value.code !== OpCode.REP_IMPORT) return bad('unexpected', `expected OP_REP_IMPORT, got ${hex16(header.value.code)}`);
  if (header.value.status !== OpStatus.OK) return ok({ status: header.value.status }, OP_HEADER_SIZE);
  const device = readDevice(buf, OP_HEADER_SIZE);
  if (device.kind !== 'ok') return device;
  return ok({ status: OpStatus.OK, device: device.value }, OP_HEADER_SIZE + DEVICE_RECORD_SIZE);
}

function statusError(what: string, status: number): Decoded<never> {
  return { kind: 'bad', error: new UsbipProtocolError('status', `${what} refused: ${opStatusName(status)}`, { opStatus: status }) };
}
