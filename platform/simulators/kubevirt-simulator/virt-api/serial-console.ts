/**
 * A serial console that behaves like a freshly booted guest's getty: a login prompt, echo of what is
 * typed, and "Login incorrect" for every attempt (the stand-in has no accounts). Bytes in, bytes out.
 */
export class SerialConsoleSession {
  private line = '';
  private asking: 'login' | 'password' = 'login';

  constructor(
    private readonly hostname: string,
    private readonly send: (bytes: Buffer) => void,
  ) {
    send(Buffer.from(`\r\n${this.banner()}\r\n\r\n${hostname} login: `));
  }

  private banner(): string {
    return `Stand-in Linux (virt-api stand-in of the local platform) ttyS0`;
  }

  receive(bytes: Buffer): void {
    for (const ch of bytes.toString('utf8')) {
      if (ch === '\r' || ch === '\n') {
        this.enter();
      } else if (ch === '\x7f' || ch === '\b') {
        if (this.line.length > 0) {
          this.line = this.line.slice(0, -1);
          if (this.asking === 'login') this.send(Buffer.from('\b \b'));
        }
      } else {
        this.line += ch;
        if (this.asking === 'login') this.send(Buffer.from(ch));
      }
    }
  }

  private enter(): void {
    if (this.asking === 'login') {
      this.asking = this.line === '' ? 'login' : 'password';
      this.send(Buffer.from(this.asking === 'password' ? '\r\nPassword: ' : `\r\n${this.hostname} login: `));
    } else {
      this.asking = 'login';
      this.send(Buffer.from(`\r\n\r\nLogin incorrect\r\n${this.hostname} login: `));
    }
    this.line = '';
  }
}
