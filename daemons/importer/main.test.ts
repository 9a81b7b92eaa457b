import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../tests/env/ports.js';
import { waitFor } from '../../shared/testing/wait.js';
import { loadConfig } from './config.js';
import { runOnce } from './main.js';
import { makeImage, serveDir, type FileServer } from '../../shared/testing/disk-images.js';

let dir: string;
let server: FileServer;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'importer-main-'));
  makeImage(dir, 'disk.qcow2', 'qcow2', 8);
  server = await serveDir(dir);
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('runOnce', () => {
  it('writes the result to the termination log', async () => {
    const log = join(dir, 'ok.json');
    const config = loadConfig({
      LOG_LEVEL: 'silent',
      IMPORTER_SOURCE: 'http',
      IMPORTER_ENDPOINT: `${server.url}/disk.qcow2`,
      IMPORTER_DESTINATION_PATH: join(dir, 'out.img'),
      IMPORTER_TERMINATION_LOG: log,
    });
    const result = await runOnce(config, new AbortController().signal);
    expect(result).toMatchObject({ phase: 'Succeeded', virtualSize: 8 << 20 });
    expect(JSON.parse(readFileSync(log, 'utf8'))).toEqual(result);
  });

  it('serves progress gauges while it runs and ends Interrupted when stopped', async () => {
    const port = await freePort();
    const log = join(dir, 'stopped.json');
    const config = loadConfig({
      LOG_LEVEL: 'silent',
      IMPORTER_SOURCE: 'upload',
      UPLOADER_PORT: '0',
      UPLOADER_HOST: '127.0.0.1',
      IMPORTER_DESTINATION_PATH: join(dir, 'up.img'),
      IMPORTER_TERMINATION_LOG: log,
      IMPORTER_METRICS_PORT: String(port),
    });
    const stop = new AbortController();
    const running = runOnce(config, stop.signal);
    const metrics = await waitFor('/metrics', async () => {
      const res = await fetch(`http://127.0.0.1:${port}/metrics`).catch(() => undefined);
      return res?.status === 200 ? res.text() : undefined;
    });
    expect(metrics).toMatch(/^importer_progress_ratio 0$/m);
    expect(metrics).toMatch(/^importer_bytes 0$/m);
    stop.abort(new Error('SIGTERM'));
    expect(await running).toEqual({ phase: 'Failed', reason: 'Interrupted', message: 'the import was interrupted' });
    expect(JSON.parse(readFileSync(log, 'utf8'))).toMatchObject({ reason: 'Interrupted' });
    await expect(fetch(`http://127.0.0.1:${port}/metrics`)).rejects.toThrow();
  });
});
