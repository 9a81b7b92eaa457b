/**
 * Records on stdout, one JSON object per line, exactly as built (field order included). pino's own
 * line format always begins with its level key, which would collide with the record's `level` and
 * move it ahead of `type`; so records are written through pino's destination (sonic-boom, the same
 * stdout writer the application log uses) rather than through a logger method.
 */
import { pino } from 'pino';
import type { AuditRecord } from './records.js';

/** Where record lines go: pino's stdout destination in production, a buffer in tests. */
export interface LineDestination {
  write(line: string): unknown;
}

export interface RecordWriter {
  /** Serializes the record and holds its line until the next flush; returns the line (no newline). */
  write(record: AuditRecord): string;
  /**
   * Writes every held line at once: one write call (one syscall on stdout) per batch instead of one
   * per record. The service flushes before it answers a batch, so an answered batch is on stdout.
   */
  flush(): void;
}

/** Serialize a record to its line (without the newline); the same text goes to stdout and the sink. */
export function recordLine(record: AuditRecord): string {
  return JSON.stringify(record);
}

export function stdoutDestination(): LineDestination {
  return pino.destination({ dest: 1, sync: true });
}

export function recordWriter(destination: LineDestination = stdoutDestination()): RecordWriter {
  let held = '';
  return {
    write(record: AuditRecord): string {
      const line = recordLine(record);
      held += `${line}\n`;
      return line;
    },
    flush(): void {
      if (held === '') return;
      const chunk = held;
      held = '';
      destination.write(chunk);
    },
  };
}
