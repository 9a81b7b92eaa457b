/**
 * When DVCR garbage collection runs: the ModuleConfig's `spec.settings.dvcr.gc.schedule` when the
 * ModuleConfig sets `dvcr.gc` (its default `0 2 * * *`), else DVCR_GC_SCHEDULE (empty: off, the
 * original's default). A malformed schedule turns collection off and says why.
 */
import { parseCron, type CronSchedule } from '../../../../shared/cron/index.js';
import { errorMessage } from '../../../../shared/errors/index.js';

export const MODULE_CONFIG_DEFAULT_SCHEDULE = '0 2 * * *';

export type ScheduleChoice =
  | { readonly kind: 'off'; readonly source: string }
  | { readonly kind: 'on'; readonly schedule: CronSchedule; readonly source: string }
  | { readonly kind: 'invalid'; readonly source: string; readonly message: string };

const record = (v: unknown): Record<string, unknown> | undefined =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;

export function chooseSchedule(fromEnv: string, moduleSettings: unknown): ScheduleChoice {
  const gc = record(record(record(moduleSettings)?.['dvcr'])?.['gc']);
  const [text, source] =
    gc !== undefined
      ? [gc['schedule'] === undefined ? MODULE_CONFIG_DEFAULT_SCHEDULE : gc['schedule'], 'ModuleConfig virtualization spec.settings.dvcr.gc.schedule']
      : [fromEnv, 'DVCR_GC_SCHEDULE'];
  if (typeof text !== 'string') return { kind: 'invalid', source, message: `${source} must be a string` };
  if (text.trim() === '') return { kind: 'off', source };
  try {
    return { kind: 'on', schedule: parseCron(text), source };
  } catch (err: unknown) {
    return { kind: 'invalid', source, message: `${source}: ${errorMessage(err)}` };
  }
}

/** Calls `fire` at every time the schedule names until stopped (timers chained, long waits split). */
export class CronTimer {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly fire: () => void,
    private readonly now: () => Date = () => new Date(),
  ) {}

  start(schedule: CronSchedule): void {
    this.stop();
    const arm = (at: Date): void => {
      const wait = Math.min(at.getTime() - this.now().getTime(), 2 ** 31 - 1);
      this.timer = setTimeout(
        () => {
          if (this.now().getTime() < at.getTime()) return arm(at);
          this.fire();
          arm(schedule.next(at));
        },
        Math.max(0, wait),
      );
      this.timer.unref();
    };
    arm(schedule.next(this.now()));
  }

  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
