/**
 * USB/IP wire constants, the one error class of the protocol, and the result type every decoder
 * returns. Decoders never throw: they answer `ok` (value + bytes consumed), `short` (the buffer
 * ends before the message does; `need` = total bytes the message needs so far) or `bad` (a
 * UsbipProtocolError naming the problem). Encoders take our own typed values and throw
 * UsbipProtocolError only for values that cannot be put on the wire (a busid over 31 bytes).
 * Layouts: ../../../../shared/facts/protocols.md section 4 (Linux usbip_protocol.rst).
 */
import { AppError } from '../../../shared/errors/index.js';

/** The only protocol version the Linux tools accept (v1.1.1). */
export const USBIP_VERSION = 0x0111;
export const USBIP_DEFAULT_PORT = 3240;

export const OpCode = {
  REQ_DEVLIST: 0x8005,
  REP_DEVLIST: 0x0005,
  REQ_IMPORT: 0x8003,
  REP_IMPORT: 0x0003,
} as const;

/** op_common.status values. */
export const OpStatus = {
  OK: 0,
  /** Not available (also: not authenticated, here). */
  NA: 1,
  DEV_BUSY: 2,
  DEV_ERR: 3,
  NODEV: 4,
  ERROR: 5,
} as const;
export type OpStatusCode = (typeof OpStatus)[keyof typeof OpStatus];

export const UrbCommand = { CMD_SUBMIT: 1, CMD_UNLINK: 2, RET_SUBMIT: 3, RET_UNLINK: 4 } as const;

export const OP_HEADER_SIZE = 8;
export const BUSID_SIZE = 32;
export const PATH_SIZE = 256;
export const DEVICE_RECORD_SIZE = 312;
export const INTERFACE_RECORD_SIZE = 4;
export const URB_HEADER_SIZE = 48;
export const ISO_DESCRIPTOR_SIZE = 16;

/** Bounds that keep a hostile peer from making us wait for (or allocate) gigabytes. */
export const MAX_DEVLIST_DEVICES = 1024;
/** Linux caps an URB's ISO packets at 1024 (USBIP_MAX_ISO_PACKETS). */
export const MAX_ISO_PACKETS = 1024;
/** Larger than any transfer a USB driver submits in one URB. */
export const MAX_TRANSFER_LENGTH = 16 * 1024 * 1024;

export type ProtocolProblem =
  | 'version' // version field is not 0x0111
  | 'unknown-code' // op code or URB command we do not know
  | 'invalid-field' // a field out of range (negative length, busid not NUL-terminated, ...)
  | 'too-large' // a count or length over the bounds above
  | 'truncated' // the peer closed before the message ended
  | 'unexpected' // a valid message where another was due
  | 'status'; // the peer answered with a non-OK status

/** The peer broke the protocol or refused; `problem` is stable, the message names the field. */
export class UsbipProtocolError extends AppError {
  readonly code = 'USBIP_PROTOCOL';
  readonly status = 502;
  readonly problem: ProtocolProblem;
  /** op_common.status the peer answered, for problem 'status'. */
  readonly opStatus: number | undefined;

  constructor(problem: ProtocolProblem, message: string, options?: { cause?: unknown; opStatus?: number }) {
    super(message, options);
    this.problem = problem;
    this.opStatus = options?.opStatus;
  }
}

export type Decoded<T> =
  | { readonly kind: 'ok'; readonly value: T; readonly length: number }
  | { readonly kind: 'short'; readonly need: number }
  | { readonly kind: 'bad'; readonly error: UsbipProtocolError };

export function short(need: number): { kind: 'short'; need: number } {
  return { kind: 'short', need };
}

export function bad(problem: ProtocolProblem, message: string): { kind: 'bad'; error: UsbipProtocolError } {
  return { kind: 'bad', error: new UsbipProtocolError(problem, message) };
}

export function ok<T>(value: T, length: number): { kind: 'ok'; value: T; length: number } {
  return { kind: 'ok', value, length };
}

/** Names for logs and errors. */
export function opStatusName(status: number): string {
  const name = Object.entries(OpStatus).find(([, v]) => v === status)?.[0];
  return name === undefined ? `status ${status}` : `ST_${name}`;
}

export function hex16(n: number): string {
  return `0x${n.toString(16).padStart(4, '0')}`;
}
