import { describe, expect, it } from '@jest/globals';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { childLogger, rootLogger, setLogLevel } from './index.js';

function capture(): { lines: string[]; stream: Writable } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done): void {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  return { lines, stream };
}

describe('log', () => {
  it('child loggers carry stable bindings before the message', () => {
    const { lines, stream } = capture();
    const parent = pino({ base: undefined }, stream);
    childLogger({ component: 'controller', handler: 'sync-cpu', object: 'ns/vm-1' }, parent).info({ attempt: 2 }, 'reconciled');
    const rec = JSON.parse(lines[0] ?? '{}') as Record<string, unknown>;
    expect(rec).toMatchObject({ component: 'controller', handler: 'sync-cpu', object: 'ns/vm-1', attempt: 2, msg: 'reconciled' });
  });

  it('the root level can be changed at run time', () => {
    const before = rootLogger.level;
    setLogLevel('debug');
    expect(rootLogger.isLevelEnabled('debug')).toBe(true);
    setLogLevel('warn');
    expect(rootLogger.isLevelEnabled('info')).toBe(false);
    rootLogger.level = before;
  });
});
