/** The live view's loop: a snapshot every second, drawn in place on a TTY or as change lines otherwise. */
import type { Writable } from 'node:stream';
import { errorMessage } from '../../shared/errors/index.js';
import type { Snapshot } from './snapshot.js';
import { changes, frame, renderScreen, type ViewHeader } from './view.js';

export interface LiveViewOptions {
  out: Writable & { columns?: number; rows?: number };
  /** Redraw in place (a terminal); false: plain lines. */
  tty: boolean;
  read: () => Promise<Snapshot>;
  header: () => ViewHeader;
  intervalMs?: number;
  /** Plain lines carry the seconds since this moment (ms since the epoch). */
  t0?: number;
}

export class LiveView {
  private readonly steps: string[] = [];
  private last: Snapshot | undefined;
  private timer: NodeJS.Timeout | undefined;
  private drawing = false;
  private first = true;

  private readonly startedAt: number;

  constructor(private readonly o: LiveViewOptions) {
    this.startedAt = o.t0 ?? Date.now();
  }

  start(): void {
    if (this.o.tty) this.o.out.write('\x1b[?25l');
    this.timer = setInterval(() => void this.tick(), this.o.intervalMs ?? 1000);
    void this.tick();
  }

  /** A line of the demo's story: in the DEMO panel on a TTY, printed at once otherwise. */
  step(line: string): void {
    this.steps.push(line);
    if (!this.o.tty) this.o.out.write(`[${((Date.now() - this.startedAt) / 1000).toFixed(1).padStart(6)} s] ${line}\n`);
  }

  /** Draw once more and stop; the last frame stays on the screen. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    while (this.drawing) await new Promise((r) => setTimeout(r, 20));
    await this.tick(true);
    if (this.o.tty) this.o.out.write('\x1b[?25h\n');
  }

  private async tick(final = false): Promise<void> {
    if (this.drawing || (this.timer === undefined && !final)) return;
    this.drawing = true;
    try {
      const snap = await this.o.read();
      if (this.o.tty) {
        const rows = this.o.out.rows ?? 60;
        const lines = renderScreen(this.o.header(), snap, this.steps, rows);
        this.o.out.write(frame(lines.slice(0, Math.max(10, rows - 1)), this.o.out.columns ?? 120, this.first));
        this.first = false;
      } else {
        for (const line of changes(this.last, snap)) this.o.out.write(`[${((Date.now() - this.startedAt) / 1000).toFixed(1).padStart(6)} s]   ${line}\n`);
      }
      this.last = snap;
    } catch (err: unknown) {
      try {
        if (!this.o.tty) this.o.out.write(`(view: cannot read the cluster: ${errorMessage(err)})\n`);
      } catch {
        // the terminal is gone
      }
    } finally {
      this.drawing = false;
    }
  }
}
