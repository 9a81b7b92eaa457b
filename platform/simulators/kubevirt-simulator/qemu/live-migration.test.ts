import { describe, expect, it } from '@jest/globals';
import { listeningPort, MigrationError, readMigration } from './live-migration.js';

describe("readMigration (QEMU's query-migrate on the source)", () => {
  it.each([
    ['no migration yet', {}, { state: 'none' }],
    ['setup', { status: 'setup' }, { state: 'active', mode: 'PreCopy', transferredBytes: 0, remainingBytes: 0 }],
    [
      'a precopy under way',
      { status: 'active', ram: { transferred: 4096, remaining: 8192 } },
      { state: 'active', mode: 'PreCopy', transferredBytes: 4096, remainingBytes: 8192 },
    ],
    ['a postcopy under way', { status: 'postcopy-active' }, { state: 'active', mode: 'PostCopy', transferredBytes: 0, remainingBytes: 0 }],
    [
      'done (the figures of this machine: 86 MiB in 754 ms, 32 ms downtime)',
      { status: 'completed', 'total-time': 754, downtime: 32, ram: { transferred: 89807569 } },
      { state: 'completed', totalMs: 754, downtimeMs: 32, transferredBytes: 89807569 },
    ],
    [
      'failed with the reason',
      { status: 'failed', 'error-desc': 'Unable to write to socket: Connection reset by peer' },
      { state: 'failed', reason: 'Unable to write to socket: Connection reset by peer' },
    ],
    ['failed without a reason', { status: 'failed' }, { state: 'failed', reason: 'QEMU reported the migration failed without a reason' }],
    ['cancelled', { status: 'cancelled' }, { state: 'failed', reason: 'the migration was cancelled' }],
  ])('%s', (_what, answer, progress) => {
    expect(readMigration(answer)).toEqual(progress);
  });
});

describe('listeningPort (the target after migrate-incoming tcp:host:0)', () => {
  it('reads the port QEMU picked', () => {
    expect(listeningPort({ 'socket-address': [{ port: '44779', ipv4: true, host: '127.0.0.1', type: 'inet' }] })).toBe(44779);
  });

  it.each([
    ['no socket-address', {}],
    ['a unix socket only', { 'socket-address': [{ type: 'unix', path: '/x' }] }],
    ['a port that is not a number', { 'socket-address': [{ type: 'inet', host: '127.0.0.1', port: 'http' }] }],
  ])('refuses %s, naming the answer', (_what, answer) => {
    expect(() => listeningPort(answer)).toThrow(MigrationError);
    expect(() => listeningPort(answer)).toThrow(/reports no listening TCP port \(query-migrate: /);
  });
});
