/**
 * A VNC viewer's first steps, for the guests' tests: the RFB 3.8 handshake (security None), one full
 * framebuffer update in Raw encoding, and how many pixel values it holds (a blank screen has one).
 * The transport is given: a WebSocket of the virt-api stand-in, or a TCP socket of `d8v vnc`.
 */
import { waitFor } from '../../../shared/testing/wait.js';

export interface RfbTransport {
  send(bytes: Buffer): void;
  /** Everything received so far. */
  received(): Buffer;
}

export interface RfbFrame {
  readonly width: number;
  readonly height: number;
  /** Distinct pixel values in the frame (counted up to 16). */
  readonly distinctPixels: number;
}

class RfbError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RfbError';
  }
}

export async function rfbFrame(t: RfbTransport): Promise<RfbFrame> {
  const got = (): Buffer => t.received();
  const have = (n: number): Promise<true> => waitFor(`${n} RFB bytes`, () => got().length >= n, { timeoutMs: 30_000, intervalMs: 20 });
  const must = (ok: boolean, what: string): void => {
    if (!ok) throw new RfbError(`RFB: ${what}`);
  };
  await have(12);
  must(got().subarray(0, 12).toString('latin1') === 'RFB 003.008\n', `version ${JSON.stringify(got().subarray(0, 12).toString('latin1'))}`);
  t.send(Buffer.from('RFB 003.008\n', 'latin1'));
  await have(13);
  const count = got()[12] ?? 0;
  await have(13 + count);
  must([...got().subarray(13, 13 + count)].includes(1), 'security None not offered');
  t.send(Buffer.from([1]));
  let at = 13 + count;
  await have(at + 4);
  must(got().readUInt32BE(at) === 0, 'security result not OK');
  at += 4;
  t.send(Buffer.from([1])); // ClientInit: shared
  await have(at + 24);
  const width = got().readUInt16BE(at);
  const height = got().readUInt16BE(at + 2);
  const bpp = (got()[at + 4] ?? 32) / 8;
  const nameLength = got().readUInt32BE(at + 20);
  at += 24 + nameLength;
  t.send(Buffer.from([2, 0, 0, 1, 0, 0, 0, 0])); // SetEncodings: Raw
  const request = Buffer.alloc(10);
  request.writeUInt8(3, 0); // FramebufferUpdateRequest, not incremental, the whole screen
  request.writeUInt16BE(width, 6);
  request.writeUInt16BE(height, 8);
  t.send(request);
  await have(at + 4);
  must(got()[at] === 0, `message type ${got()[at] ?? '?'} instead of FramebufferUpdate`);
  const rects = got().readUInt16BE(at + 2);
  at += 4;
  const pixels = new Set<string>();
  for (let r = 0; r < rects; r++) {
    await have(at + 12);
    const w = got().readUInt16BE(at + 4);
    const h = got().readUInt16BE(at + 6);
    must(got().readInt32BE(at + 8) === 0, 'a rectangle not in Raw encoding');
    at += 12;
    await have(at + w * h * bpp);
    const data = got();
    for (let p = 0; p < w * h && pixels.size < 16; p++) pixels.add(data.subarray(at + p * bpp, at + (p + 1) * bpp).toString('hex'));
    at += w * h * bpp;
  }
  return { width, height, distinctPixels: pixels.size };
}
