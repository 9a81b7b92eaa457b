import { describe, expect, it } from '@jest/globals';
import { RfbServerSession, SCREEN } from './rfb.js';
import { SerialConsoleSession } from './serial-console.js';

function rfb(): { session: RfbServerSession; out: () => Buffer; ended: string[] } {
  const sent: Buffer[] = [];
  const ended: string[] = [];
  const session = new RfbServerSession(
    (b) => sent.push(b),
    (r) => ended.push(r),
  );
  return { session, out: () => Buffer.concat(sent), ended };
}

describe('RfbServerSession (the stand-in VNC server)', () => {
  it('goes through version, security None and init when the viewer sends its bytes one at a time', () => {
    const { session, out, ended } = rfb();
    for (const byte of Buffer.concat([Buffer.from('RFB 003.008\n', 'latin1'), Buffer.from([1, 0])])) session.receive(Buffer.from([byte]));
    expect(session.state).toBe('messages');
    const bytes = out();
    expect(bytes.subarray(0, 12).toString('latin1')).toBe('RFB 003.008\n');
    expect([...bytes.subarray(12, 18)]).toEqual([1, 1, 0, 0, 0, 0]);
    expect([bytes.readUInt16BE(18), bytes.readUInt16BE(20)]).toEqual([SCREEN.width, SCREEN.height]);
    expect(ended).toEqual([]);
  });

  it('sends one full screen for a non-incremental update request, nothing for an incremental one, and skips input events', () => {
    const { session, out } = rfb();
    session.receive(Buffer.concat([Buffer.from('RFB 003.008\n', 'latin1'), Buffer.from([1, 0])]));
    const before = out().length;
    const setEncodings = Buffer.from([2, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 1]);
    const key = Buffer.from([4, 1, 0, 0, 0, 0, 0, 0x61]);
    const incremental = Buffer.from([3, 1, 0, 0, 0, 0, 1, 64, 0, 200]);
    const full = Buffer.from([3, 0, 0, 0, 0, 0, 1, 64, 0, 200]);
    session.receive(Buffer.concat([setEncodings, key, incremental]));
    expect(out().length).toBe(before);
    session.receive(full);
    expect(out().length - before).toBe(16 + SCREEN.width * SCREEN.height * 4);
  });

  it.each([
    ['an unknown version', Buffer.from('RFB 004.000\n', 'latin1'), 'unsupported RFB version'],
    ['a security type it did not offer', Buffer.concat([Buffer.from('RFB 003.008\n', 'latin1'), Buffer.from([2])]), 'security type 2 was not offered'],
    ['an unknown message type', Buffer.concat([Buffer.from('RFB 003.008\n', 'latin1'), Buffer.from([1, 0, 99])]), 'unknown RFB client message type 99'],
  ])('ends the session on %s, naming it', (_what, bytes, reason) => {
    const { session, ended } = rfb();
    session.receive(bytes);
    expect(ended).toEqual([expect.stringContaining(reason)]);
    session.receive(Buffer.from('more garbage'));
    expect(ended).toHaveLength(1);
  });
});

describe('SerialConsoleSession (the stand-in serial console)', () => {
  it('prompts, echoes the login name (with backspace), hides the password and refuses it', () => {
    let out = '';
    const c = new SerialConsoleSession('vm1', (b) => (out += b.toString()));
    expect(out.endsWith('vm1 login: ')).toBe(true);
    out = '';
    c.receive(Buffer.from('roox\x7ft\r'));
    expect(out).toBe('roox\b \bt\r\nPassword: ');
    out = '';
    c.receive(Buffer.from('secret\n'));
    expect(out).toBe('\r\n\r\nLogin incorrect\r\nvm1 login: ');
  });
});
