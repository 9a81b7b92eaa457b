import { describe, expect, it } from '@jest/globals';
import { childLogger } from '../../shared/log/index.js';
import { Progress } from './progress.js';

function progress(): Progress {
  const log = childLogger({ component: 'progress-test' });
  log.level = 'silent';
  return new Progress(log, 60_000);
}

describe('Progress', () => {
  it('reports the share read once the total is known, also when it becomes known late', async () => {
    const p = progress();
    p.start(undefined);
    p.add(50);
    p.report();
    expect(await p.registry.expose()).toMatch(/^importer_progress_ratio 0$/m);
    p.setTotal(200);
    p.report();
    expect(await p.registry.expose()).toMatch(/^importer_progress_ratio 0\.25$/m);
    expect(await p.registry.expose()).toMatch(/^importer_bytes 50$/m);
    p.add(150);
    p.finish();
    expect(await p.registry.expose()).toMatch(/^importer_progress_ratio 1$/m);
  });

  it('shows the bytes read so far to a scrape between two log lines', async () => {
    const p = progress();
    p.start(400);
    p.add(100);
    expect(await p.expose()).toMatch(/^importer_progress_ratio 0\.25$/m);
    p.add(100);
    expect(await p.expose()).toMatch(/^importer_bytes 200$/m);
    p.finish();
  });

  it('starts again from zero for a new transfer (a retried upload)', async () => {
    const p = progress();
    p.start(100);
    p.add(80);
    p.finish();
    p.start(100);
    p.report();
    expect(p.bytesRead).toBe(0);
    expect(await p.registry.expose()).toMatch(/^importer_progress_ratio 0$/m);
    p.finish();
  });
});
