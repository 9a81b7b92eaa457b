/**
 * Progress of one import: bytes read of the source (and of how many, when known), logged at an
 * interval and kept in gauges for the optional /metrics endpoint the controller may scrape.
 */
import type { Logger } from '../../shared/log/index.js';
import { Registry, type Gauge } from '../../shared/metrics/index.js';

export class Progress {
  readonly registry = new Registry({ processMetrics: true });
  private readonly ratio: Gauge;
  private readonly bytesGauge: Gauge;
  private readonly speed: Gauge;
  private bytes = 0;
  private total: number | undefined;
  private started = Date.now();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly log: Logger,
    private readonly intervalMs: number,
  ) {
    this.ratio = this.registry.gauge({ name: 'importer_progress_ratio', help: 'Share of the source read, 0 to 1 (0 while the size is unknown).' });
    this.bytesGauge = this.registry.gauge({ name: 'importer_bytes', help: 'Bytes of the source read so far.' });
    this.speed = this.registry.gauge({ name: 'importer_speed_bytes_per_second', help: 'Average speed of reading the source.' });
  }

  /** A new transfer begins (an upload retried after a broken one starts again from zero). */
  start(total: number | undefined): void {
    this.bytes = 0;
    this.total = total;
    this.started = Date.now();
    this.update();
    this.timer ??= setInterval(() => this.report(), this.intervalMs).unref();
  }

  /** The size became known after the start (a registry source learns it from the layer's tar header). */
  setTotal(total: number): void {
    this.total = total;
  }

  add(n: number): void {
    this.bytes += n;
  }

  get bytesRead(): number {
    return this.bytes;
  }

  /** The gauges as of now, in the Prometheus text format (a scrape sees the bytes read so far, not those of the last log line). */
  async expose(): Promise<string> {
    this.update();
    return this.registry.expose();
  }

  private update(): void {
    const seconds = Math.max((Date.now() - this.started) / 1000, 1e-3);
    this.bytesGauge.set(undefined, this.bytes);
    this.speed.set(undefined, this.bytes / seconds);
    this.ratio.set(undefined, this.total !== undefined && this.total > 0 ? Math.min(1, this.bytes / this.total) : 0);
  }

  report(): void {
    this.update();
    const percent = this.total !== undefined && this.total > 0 ? ((100 * this.bytes) / this.total).toFixed(1) : null;
    const seconds = Math.max((Date.now() - this.started) / 1000, 1e-3);
    this.log.info({ bytes: this.bytes, total: this.total ?? null, percent, bytesPerSecond: Math.round(this.bytes / seconds) }, 'progress');
  }

  /** The transfer is over: last line, timer stopped (once per start). */
  finish(): void {
    if (this.timer === undefined) return;
    clearInterval(this.timer);
    this.timer = undefined;
    if (this.total === undefined) this.total = this.bytes;
    this.report();
  }
}
