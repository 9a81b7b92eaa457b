/**
 * Rescans sysfs when USB devices may have changed (ADR 0012): an inotify watch on
 * `<sysRoot>/bus/usb/devices` where the filesystem reports changes (fixture trees; sysfs itself
 * reports none), and a poll every RESCAN_INTERVAL that works everywhere. Triggers within the debounce
 * window coalesce into one scan; a scan never overlaps another. Each broken entry is logged once per
 * reason, not on every poll.
 */
import { watch, type FSWatcher } from 'node:fs';
import type { Logger } from '../../shared/log/index.js';
import { scanUsbDevices, usbDevicesDir, type ScanResult, type UsbDeviceInfo } from './discovery/index.js';

export interface MonitorOptions {
  sysRoot: string;
  debounceMs: number;
  pollMs: number;
  log: Logger;
  /** Called after a scan whose device list differs from the last one handed on successfully (and after the first); a throw is retried at the next scan. */
  onChange: (devices: UsbDeviceInfo[], scan: ScanResult) => void | Promise<void>;
  /** Called after every scan (metrics). */
  onScan?: (scan: ScanResult, ms: number) => void;
  scan?: (sysRoot: string) => Promise<ScanResult>;
}

export class DeviceMonitor {
  private timer: NodeJS.Timeout | undefined;
  private poller: NodeJS.Timeout | undefined;
  private watcher: FSWatcher | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private last: string | undefined;
  private readonly logged = new Map<string, string>();
  private stopped = false;
  scans = 0;

  constructor(private readonly opts: MonitorOptions) {}

  /** The first scan (its onChange done), then watching and polling until stop(). */
  async start(): Promise<ScanResult> {
    const first = await this.scanOnce();
    if (this.stopped) return first;
    try {
      this.watcher = watch(usbDevicesDir(this.opts.sysRoot), () => this.trigger());
      this.watcher.on('error', (err) => this.opts.log.debug({ err }, 'inotify watch ended; polling only'));
    } catch (err: unknown) {
      this.opts.log.debug({ err }, 'no inotify watch on the USB devices dir; polling only');
    }
    this.poller = setInterval(() => this.trigger(0), this.opts.pollMs);
    return first;
  }

  /** Ask for a rescan after the debounce (or after `delayMs`). */
  trigger(delayMs = this.opts.debounceMs): void {
    if (this.stopped || this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.rescan();
    }, delayMs);
  }

  /** Scan now (after any scan in progress); resolves when done. */
  async rescan(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          await this.scanOnce();
        } while (this.again && !this.stopped);
      } catch (err: unknown) {
        this.opts.log.warn({ err }, 'USB rescan failed; the next poll tries again');
      } finally {
        this.running = undefined;
      }
    })();
    return this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    clearInterval(this.poller);
    this.watcher?.close();
    await this.running;
  }

  private async scanOnce(): Promise<ScanResult> {
    const started = performance.now();
    const scan = await (this.opts.scan ?? scanUsbDevices)(this.opts.sysRoot);
    this.scans++;
    this.opts.onScan?.(scan, performance.now() - started);
    this.logProblems(scan);
    const text = JSON.stringify(scan.devices);
    if (text !== this.last) {
      try {
        await this.opts.onChange(scan.devices, scan);
        this.last = text;
      } catch (err: unknown) {
        this.opts.log.warn({ err }, 'handing on the changed USB devices failed; tried again at the next scan');
      }
    }
    return scan;
  }

  private logProblems(scan: ScanResult): void {
    const seen = new Set<string>();
    for (const { path, reason } of scan.skipped) {
      seen.add(path);
      if (this.logged.get(path) === reason) continue;
      this.logged.set(path, reason);
      this.opts.log.warn({ path, reason }, 'USB device skipped: its sysfs entry cannot be read');
    }
    for (const path of this.logged.keys()) if (!seen.has(path)) this.logged.delete(path);
  }
}
