import type { LineDestination } from '../output.js';

/** A destination that keeps record lines in memory (tests, benchmarks). */
export class MemoryDestination implements LineDestination {
  readonly lines: string[] = [];

  write(chunk: string): boolean {
    for (const line of chunk.split('\n')) if (line !== '') this.lines.push(line);
    return true;
  }
}
