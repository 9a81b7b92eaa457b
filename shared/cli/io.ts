/** The process streams a command uses, injected so tests run commands in-process. */
import type { Readable, Writable } from 'node:stream';

export interface Io {
  readonly stdin: Readable;
  readonly stdout: Writable;
  readonly stderr: Writable;
}
