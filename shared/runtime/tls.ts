/**
 * Serving certificates that change under a running function: the PEM files (a mounted Secret, which
 * kubelet updates in place) are read at start and again every reload interval. A sound pair (key
 * matches, currently valid) is put into the server's secure context; anything else is logged, makes
 * the function not ready and is never served: until a sound pair arrives the server completes no
 * TLS handshake, and a served certificate that expires is withdrawn. A broken update while a sound
 * pair is served is refused and logged; the sound pair stays (and so does readiness).
 */
import { readFile } from 'node:fs/promises';
import type { Server as HttpsServer } from 'node:https';
import { errorMessage } from '../errors/index.js';
import type { Logger } from '../log/index.js';

export interface TlsFiles {
  readonly certFile: string;
  readonly keyFile: string;
  readonly reloadMs: number;
}

/** Ready to serve (with the problem of the latest reload, if one was refused), or why not. */
export type TlsStatus = { readonly ok: true; readonly notAfter: Date; readonly refused?: string } | { readonly ok: false; readonly reason: string };

export class TlsReloader {
  private current: { cert: string; key: string; notAfter: Date } | undefined;
  private problem: string | undefined = 'no certificate loaded yet';
  private timer: NodeJS.Timeout | undefined;
  private loading: Promise<void> = Promise.resolve();

  constructor(
    private readonly files: TlsFiles,
    private readonly server: HttpsServer,
    private readonly log: Logger,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Load once, then keep reloading every interval until stop(). */
  async start(): Promise<void> {
    await this.reload();
    this.timer = setInterval(() => void (this.loading = this.loading.then(() => this.reload())), this.files.reloadMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  status(): TlsStatus {
    if (this.current !== undefined && this.current.notAfter.getTime() > this.now().getTime()) {
      return this.problem === undefined ? { ok: true, notAfter: this.current.notAfter } : { ok: true, notAfter: this.current.notAfter, refused: this.problem };
    }
    return { ok: false, reason: this.problem ?? 'the served certificate has expired' };
  }

  /** Read the files; swap in a sound new pair, withdraw an expired one, keep a sound one over a bad update. */
  async reload(): Promise<void> {
    const now = this.now();
    let cert: string;
    let key: string;
    try {
      [cert, key] = await Promise.all([readFile(this.files.certFile, 'utf8'), readFile(this.files.keyFile, 'utf8')]);
    } catch (err: unknown) {
      this.fail(`cannot read the TLS files: ${errorMessage(err)}`, now);
      return;
    }
    if (this.current?.cert === cert && this.current.key === key) {
      if (this.current.notAfter.getTime() <= now.getTime()) this.fail('the served certificate has expired', now);
      else this.problem = undefined;
      return;
    }
    // Loaded here, not at start: its x509 and ASN.1 libraries cost a plain-HTTP function ~5 MB resident.
    const { inspectPair } = await import('../certs/index.js');
    const check = inspectPair({ certPem: cert, keyPem: key, now });
    if (!check.ok) {
      this.fail(`the TLS files hold no usable certificate: ${check.reason}`, now);
      return;
    }
    this.server.setSecureContext({ cert, key });
    const first = this.current === undefined;
    this.current = { cert, key, notAfter: check.notAfter };
    this.problem = undefined;
    this.log.info({ notAfter: check.notAfter.toISOString(), fingerprint: check.fingerprint }, first ? 'TLS certificate loaded' : 'TLS certificate reloaded');
  }

  /** Log a new problem once; withdraw the served pair only when it is no longer valid itself. */
  private fail(reason: string, now: Date): void {
    if (reason !== this.problem) this.log.error({ certFile: this.files.certFile, reason }, 'TLS certificate problem');
    this.problem = reason;
    if (this.current !== undefined && this.current.notAfter.getTime() <= now.getTime()) {
      this.server.setSecureContext({});
      this.current = undefined;
      this.log.error('the served certificate expired and was withdrawn: no TLS handshake until a valid one arrives');
    }
  }
}
