/**
 * URB phase messages (protocols.md 4.3): CMD_SUBMIT, RET_SUBMIT, CMD_UNLINK, RET_UNLINK, each a
 * 48-byte header, then transfer data and ISO packet descriptors where the message carries them.
 * Pure functions; see protocol.ts for the decoder contract.
 *
 * Whether a RET_SUBMIT carries data depends on the direction of the CMD_SUBMIT it answers, which the
 * reply does not repeat (Linux sends direction 0 in replies): the decoder asks `directionOf(seqnum)`
 * and falls back to the header's direction field.
 */
import {
  bad,
  hex16,
  ISO_DESCRIPTOR_SIZE,
  MAX_ISO_PACKETS,
  MAX_TRANSFER_LENGTH,
  ok,
  short,
  URB_HEADER_SIZE,
  UrbCommand,
  UsbipProtocolError,
  type Decoded,
} from './protocol.js';

export const DIR_OUT = 0;
export const DIR_IN = 1;
export type Direction = typeof DIR_OUT | typeof DIR_IN;

export interface IsoDescriptor {
  readonly offset: number;
  readonly length: number;
  readonly actualLength: number;
  readonly status: number;
}

interface Basic {
  readonly seqnum: number;
  /** (busnum << 16) | devnum in requests, 0 in replies. */
  readonly devid: number;
  readonly direction: Direction;
  readonly ep: number;
}

export interface CmdSubmit extends Basic {
  readonly command: 'CMD_SUBMIT';
  readonly transferFlags: number;
  readonly transferBufferLength: number;
  readonly startFrame: number;
  /** 0 or -1 (0xffffffff) for non-ISO transfers; both occur on the wire. */
  readonly numberOfPackets: number;
  readonly interval: number;
  /** The 8-byte USB setup packet, raw (its own fields are little-endian). */
  readonly setup: Buffer;
  /** OUT: transferBufferLength bytes; IN: empty. */
  readonly data: Buffer;
  readonly iso: readonly IsoDescriptor[];
}

export interface RetSubmit extends Basic {
  readonly command: 'RET_SUBMIT';
  /** 0 or -errno. */
  readonly status: number;
  readonly actualLength: number;
  readonly startFrame: number;
  readonly numberOfPackets: number;
  readonly errorCount: number;
  /** IN: actualLength bytes; OUT: empty. */
  readonly data: Buffer;
  readonly iso: readonly IsoDescriptor[];
}

export interface CmdUnlink extends Basic {
  readonly command: 'CMD_UNLINK';
  readonly unlinkSeqnum: number;
}

export interface RetUnlink extends Basic {
  readonly command: 'RET_UNLINK';
  /** -ECONNRESET (-104) when the URB was still pending, 0 when it had completed. */
  readonly status: number;
}

export type UrbMessage = CmdSubmit | RetSubmit | CmdUnlink | RetUnlink;

export interface UrbDecodeOptions {
  /** Direction of the CMD_SUBMIT a RET_SUBMIT answers (the client remembers it by seqnum). */
  readonly directionOf?: (seqnum: number) => Direction | undefined;
}

const EMPTY = Buffer.alloc(0);
const ZERO_SETUP = Buffer.alloc(8);

function isIso(numberOfPackets: number): boolean {
  return numberOfPackets > 0 && numberOfPackets !== 0xffffffff && numberOfPackets !== -1;
}

function isoCount(message: CmdSubmit | RetSubmit): number {
  if (!isIso(message.numberOfPackets)) return 0;
  if (message.iso.length !== message.numberOfPackets) {
    throw new UsbipProtocolError('invalid-field', `number_of_packets ${message.numberOfPackets} but ${message.iso.length} ISO descriptors`);
  }
  return message.iso.length;
}

/** The decoder takes the data length from the header: the two must agree. */
function checkDataLength(m: CmdSubmit | RetSubmit): void {
  const expected = m.command === 'CMD_SUBMIT' ? (m.direction === DIR_OUT ? m.transferBufferLength : 0) : m.data.length === 0 ? 0 : m.actualLength;
  if (m.data.length !== expected) {
    throw new UsbipProtocolError('invalid-field', `${m.command} seqnum ${m.seqnum} carries ${m.data.length} data bytes, its header says ${expected}`);
  }
}

/** Bytes on the wire for this message. */
export function urbSize(message: UrbMessage): number {
  if (message.command === 'CMD_SUBMIT' || message.command === 'RET_SUBMIT') {
    checkDataLength(message);
    return URB_HEADER_SIZE + message.data.length + isoCount(message) * ISO_DESCRIPTOR_SIZE;
  }
  return URB_HEADER_SIZE;
}

/** Encode into `buf` at `at` (which must have urbSize bytes free); returns the bytes written. */
export function encodeUrbInto(buf: Buffer, at: number, m: UrbMessage): number {
  buf.fill(0, at, at + URB_HEADER_SIZE);
  buf.writeUInt32BE(UrbCommand[m.command], at);
  buf.writeUInt32BE(m.seqnum >>> 0, at + 4);
  buf.writeUInt32BE(m.devid >>> 0, at + 8);
  buf.writeUInt32BE(m.direction, at + 12);
  buf.writeUInt32BE(m.ep >>> 0, at + 16);
  switch (m.command) {
    case 'CMD_SUBMIT':
      buf.writeUInt32BE(m.transferFlags >>> 0, at + 0x14);
      buf.writeInt32BE(m.transferBufferLength | 0, at + 0x18);
      buf.writeInt32BE(m.startFrame | 0, at + 0x1c);
      buf.writeInt32BE(m.numberOfPackets | 0, at + 0x20);
      buf.writeInt32BE(m.interval | 0, at + 0x24);
      m.setup.copy(buf, at + 0x28, 0, 8);
      return URB_HEADER_SIZE + writePayload(buf, at + URB_HEADER_SIZE, m);
    case 'RET_SUBMIT':
      buf.writeInt32BE(m.status | 0, at + 0x14);
      buf.writeInt32BE(m.actualLength | 0, at + 0x18);
      buf.writeInt32BE(m.startFrame | 0, at + 0x1c);
      buf.writeInt32BE(m.numberOfPackets | 0, at + 0x20);
      buf.writeInt32BE(m.errorCount | 0, at + 0x24);
      return URB_HEADER_SIZE + writePayload(buf, at + URB_HEADER_SIZE, m);
    case 'CMD_UNLINK':
      buf.writeUInt32BE(m.unlinkSeqnum >>> 0, at + 0x14);
      return URB_HEADER_SIZE;
    case 'RET_UNLINK':
      buf.writeInt32BE(m.status | 0, at + 0x14);
      return URB_HEADER_SIZE;
  }
}

function writePayload(buf: Buffer, at: number, m: CmdSubmit | RetSubmit): number {
  m.data.copy(buf, at);
  let pos = at + m.data.length;
  if (isIso(m.numberOfPackets)) {
    for (const d of m.iso) {
      buf.writeUInt32BE(d.offset >>> 0, pos);
      buf.writeUInt32BE(d.length >>> 0, pos + 4);
      buf.writeUInt32BE(d.actualLength >>> 0, pos + 8);
      buf.writeUInt32BE(d.status >>> 0, pos + 12);
      pos += ISO_DESCRIPTOR_SIZE;
    }
  }
  return pos - at;
}

export function encodeUrb(message: UrbMessage): Buffer {
  const buf = Buffer.allocUnsafe(urbSize(message));
  encodeUrbInto(buf, 0, message);
  return buf;
}

/**
 * One URB message from `buf` at `at`. Data and descriptors are copied out, so the caller may reuse
 * `buf`. Negative or oversized lengths and counts are `bad`, never a wait for more bytes.
 */
export function decodeUrb(buf: Buffer, at = 0, options: UrbDecodeOptions = {}): Decoded<UrbMessage> {
  if (buf.length - at < URB_HEADER_SIZE) return short(at + URB_HEADER_SIZE);
  const command = buf.readUInt32BE(at);
  const seqnum = buf.readUInt32BE(at + 4);
  const devid = buf.readUInt32BE(at + 8);
  const rawDirection = buf.readUInt32BE(at + 12);
  const ep = buf.readUInt32BE(at + 16);
  if (rawDirection > 1) return bad('invalid-field', `URB direction ${rawDirection} (0 out, 1 in)`);
  const direction = rawDirection as Direction;
  switch (command) {
    case UrbCommand.CMD_UNLINK:
      return ok({ command: 'CMD_UNLINK', seqnum, devid, direction, ep, unlinkSeqnum: buf.readUInt32BE(at + 0x14) }, URB_HEADER_SIZE);
    case UrbCommand.RET_UNLINK:
      return ok({ command: 'RET_UNLINK', seqnum, devid, direction, ep, status: buf.readInt32BE(at + 0x14) }, URB_HEADER_SIZE);
    case UrbCommand.CMD_SUBMIT: {
      const transferBufferLength = buf.readInt32BE(at + 0x18);
      const numberOfPackets = buf.readUInt32BE(at + 0x20);
      const payload = readPayload(buf, at, direction === DIR_OUT ? transferBufferLength : 0, numberOfPackets, 'transfer_buffer_length');
      if (payload.kind !== 'ok') return payload;
      const message: CmdSubmit = {
        command: 'CMD_SUBMIT',
        seqnum,
        devid,
        direction,
        ep,
        transferFlags: buf.readUInt32BE(at + 0x14),
        transferBufferLength,
        startFrame: buf.readInt32BE(at + 0x1c),
        numberOfPackets: buf.readInt32BE(at + 0x20),
        interval: buf.readInt32BE(at + 0x24),
        setup: Buffer.from(buf.subarray(at + 0x28, at + 0x30)),
        data: payload.value.data,
        iso: payload.value.iso,
      };
      return ok(message, payload.length);
    }
    case UrbCommand.RET_SUBMIT: {
      const actualLength = buf.readInt32BE(at + 0x18);
      const numberOfPackets = buf.readUInt32BE(at + 0x20);
      const inbound = (options.directionOf?.(seqnum) ?? direction) === DIR_IN;
      const payload = readPayload(buf, at, inbound ? actualLength : 0, numberOfPackets, 'actual_length');
      if (payload.kind !== 'ok') return payload;
      const message: RetSubmit = {
        command: 'RET_SUBMIT',
        seqnum,
        devid,
        direction,
        ep,
        status: buf.readInt32BE(at + 0x14),
        actualLength,
        startFrame: buf.readInt32BE(at + 0x1c),
        numberOfPackets: buf.readInt32BE(at + 0x20),
        errorCount: buf.readInt32BE(at + 0x24),
        data: payload.value.data,
        iso: payload.value.iso,
      };
      return ok(message, payload.length);
    }
    default:
      return bad('unknown-code', `unknown URB command ${hex16(command)}`);
  }
}

function readPayload(buf: Buffer, at: number, dataLength: number, numberOfPackets: number, field: string): Decoded<{ data: Buffer; iso: IsoDescriptor[] }> {
  if (dataLength < 0) return bad('invalid-field', `negative ${field} ${dataLength}`);
  if (dataLength > MAX_TRANSFER_LENGTH) return bad('too-large', `${field} ${dataLength} over ${MAX_TRANSFER_LENGTH}`);
  const packets = isIso(numberOfPackets) ? numberOfPackets : 0;
  if (packets > MAX_ISO_PACKETS) return bad('too-large', `number_of_packets ${packets} over ${MAX_ISO_PACKETS}`);
  const dataStart = at + URB_HEADER_SIZE;
  const end = dataStart + dataLength + packets * ISO_DESCRIPTOR_SIZE;
  if (buf.length < end) return short(end);
  const data = dataLength === 0 ? EMPTY : Buffer.from(buf.subarray(dataStart, dataStart + dataLength));
  const iso: IsoDescriptor[] = [];
  for (let pos = dataStart + dataLength; pos < end; pos += ISO_DESCRIPTOR_SIZE) {
    iso.push({ offset: buf.readUInt32BE(pos), length: buf.readUInt32BE(pos + 4), actualLength: buf.readUInt32BE(pos + 8), status: buf.readInt32BE(pos + 12) });
  }
  return ok({ data, iso }, end - at);
}

/** A CMD_SUBMIT with the defaults of a non-ISO transfer; for tests, benchmarks and the fake stub. */
export function cmdSubmit(fields: Partial<CmdSubmit> & Pick<CmdSubmit, 'seqnum'>): CmdSubmit {
  return {
    command: 'CMD_SUBMIT',
    devid: 0,
    direction: DIR_OUT,
    ep: 0,
    transferFlags: 0,
    transferBufferLength: fields.data?.length ?? 0,
    startFrame: 0,
    numberOfPackets: 0,
    interval: 0,
    setup: ZERO_SETUP,
    data: EMPTY,
    iso: [],
    ...fields,
  };
}

export function retSubmit(fields: Partial<RetSubmit> & Pick<RetSubmit, 'seqnum'>): RetSubmit {
  return {
    command: 'RET_SUBMIT',
    devid: 0,
    direction: DIR_OUT,
    ep: 0,
    status: 0,
    actualLength: fields.data?.length ?? 0,
    startFrame: 0,
    numberOfPackets: 0,
    errorCount: 0,
    data: EMPTY,
    iso: [],
    ...fields,
  };
}
