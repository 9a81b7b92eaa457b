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
  write(record: AuditRecord): string;
}

/** Serialize a record to its line (without the newline); the same text goes to stdout and the sink. */
export function recordLine(record: AuditRecord): string {
  return JSON.stringify(record);
}

export function stdoutDestination(): LineDestination {
  return pino.destination({ dest: 1, sync: true });
}

export function recordWriter(destination: LineDestination = stdoutDestination()): RecordWriter {
  return {
    write(record: AuditRecord): string {
      const line = recordLine(record);
      destination.write(`${line}\n`);
      return line;
    },
  };
}
