/**
 * The server side of RFB 3.8 (RFC 6143), enough for a VNC viewer to connect and see a screen: the
 * version and "None" security handshake, ServerInit, and a grey framebuffer in Raw encoding sent on
 * every non-incremental FramebufferUpdateRequest. Input events are read and ignored. A stand-in for
 * a VM's screen, not a remote desktop.
 */

export const RFB_VERSION = 'RFB 003.008\n';
export const SCREEN = { width: 320, height: 200, name: 'virt-api stand-in' } as const;

type Phase = 'version' | 'security' | 'init' | 'messages' | 'closed';

/** Fixed lengths of client messages by type (SetEncodings and ClientCutText have a variable tail). */
const FIXED: Record<number, number> = { 0: 20, 3: 10, 4: 8, 5: 6 };

export class RfbServerSession {
  private phase: Phase = 'version';
  private buffer = Buffer.alloc(0);
  private bytesPerPixel = 4;
  /** Bytes sent to the viewer; `error` ends the session with a reason. */
  constructor(
    private readonly send: (bytes: Buffer) => void,
    private readonly end: (reason: string) => void,
  ) {
    send(Buffer.from(RFB_VERSION, 'latin1'));
  }

  get state(): Phase {
    return this.phase;
  }

  receive(bytes: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, bytes]);
    for (;;) {
      const used = this.step();
      if (used === 0) return;
      this.buffer = this.buffer.subarray(used);
    }
  }

  /** Handle one complete message at the head of the buffer; the bytes it used, 0 when incomplete. */
  private step(): number {
    const b = this.buffer;
    switch (this.phase) {
      case 'version': {
        if (b.length < 12) return 0;
        const version = b.subarray(0, 12).toString('latin1');
        if (!/^RFB 003\.00[378]\n$/.test(version)) return this.fail(`unsupported RFB version ${JSON.stringify(version)}`);
        this.send(Buffer.from([1, 1])); // one security type: None
        this.phase = 'security';
        return 12;
      }
      case 'security':
        if (b.length < 1) return 0;
        if (b[0] !== 1) return this.fail(`security type ${b[0]} was not offered`);
        this.send(Buffer.from([0, 0, 0, 0])); // SecurityResult OK
        this.phase = 'init';
        return 1;
      case 'init': {
        if (b.length < 1) return 0;
        const name = Buffer.from(SCREEN.name, 'latin1');
        const init = Buffer.alloc(24 + name.length);
        init.writeUInt16BE(SCREEN.width, 0);
        init.writeUInt16BE(SCREEN.height, 2);
        // pixel format: 32 bpp, depth 24, little-endian, true colour, max 255, shifts 16/8/0
        Buffer.from([32, 24, 0, 1, 0, 255, 0, 255, 0, 255, 16, 8, 0, 0, 0, 0]).copy(init, 4);
        init.writeUInt32BE(name.length, 20);
        name.copy(init, 24);
        this.send(init);
        this.phase = 'messages';
        return 1;
      }
      case 'messages':
        return this.message(b);
      case 'closed':
        return b.length;
    }
  }

  private message(b: Buffer): number {
    if (b.length < 1) return 0;
    const type = b[0];
    if (type === 2) {
      if (b.length < 4) return 0;
      const n = 4 + 4 * b.readUInt16BE(2);
      return b.length < n ? 0 : n;
    }
    if (type === 6) {
      if (b.length < 8) return 0;
      const n = 8 + b.readUInt32BE(4);
      return b.length < n ? 0 : n;
    }
    const size = FIXED[type];
    if (size === undefined) return this.fail(`unknown RFB client message type ${type}`);
    if (b.length < size) return 0;
    if (type === 0) this.bytesPerPixel = Math.max(1, b[4] / 8);
    if (type === 3 && b[1] === 0) this.sendScreen();
    return size;
  }

  private sendScreen(): void {
    const { width, height } = SCREEN;
    const header = Buffer.alloc(16);
    header.writeUInt8(0, 0); // FramebufferUpdate
    header.writeUInt16BE(1, 2); // one rectangle
    header.writeUInt16BE(width, 8);
    header.writeUInt16BE(height, 10);
    header.writeInt32BE(0, 12); // Raw
    this.send(Buffer.concat([header, Buffer.alloc(width * height * this.bytesPerPixel, 0x80)]));
  }

  private fail(reason: string): number {
    this.phase = 'closed';
    this.end(reason);
    return this.buffer.length;
  }
}
