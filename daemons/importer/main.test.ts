import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../tests/env/ports.js';
import { waitFor } from '../../shared/testing/wait.js';
import { loadConfig } from './config.js';
import { runOnce } from './main.js';
import { EXIT } from './result.js';
import { makeImage, serveDir, type FileServer } from '../../shared/testing/disk-images.js';

const PROGRAM = join(import.meta.dirname, 'main.ts');

let dir: string;
let server: FileServer;

/** A server holding a port of 127.0.0.1, as another process in the pod would. */
async function holdPort(): Promise<Server> {
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  return holder;
}

/** The program as its pod runs it: a child process configured by `env`; resolves with its exit code. */
function runProgram(env: Record<string, string>): Promise<number | null> {
  const child = spawn(process.execPath, ['--import', 'tsx', PROGRAM], { env: { ...process.env, ...env }, stdio: 'ignore' });
  return new Promise((resolve) => child.once('close', resolve));
}

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

  it('ends Failed naming the address when the upload port is taken', async () => {
    const holder = await holdPort();
    const port = (holder.address() as AddressInfo).port;
    const config = loadConfig({
      LOG_LEVEL: 'silent',
      IMPORTER_SOURCE: 'upload',
      UPLOADER_PORT: String(port),
      UPLOADER_HOST: '127.0.0.1',
      IMPORTER_DESTINATION_PATH: join(dir, 'up-taken.img'),
      IMPORTER_TERMINATION_LOG: join(dir, 'up-taken.json'),
    });
    try {
      expect(await runOnce(config, new AbortController().signal)).toEqual({
        phase: 'Failed',
        reason: 'InternalError',
        message: `the upload endpoint cannot listen on 127.0.0.1:${port}: address already in use`,
      });
    } finally {
      holder.close();
    }
  });
});

describe('the program', () => {
  it('fails with exit 1 and a result naming the address when its metrics port is taken', async () => {
    const holder = await holdPort();
    const port = (holder.address() as AddressInfo).port;
    const log = join(dir, 'taken.json');
    const destination = join(dir, 'never.img');
    try {
      const code = await runProgram({
        LOG_LEVEL: 'silent',
        IMPORTER_SOURCE: 'http',
        IMPORTER_ENDPOINT: `${server.url}/disk.qcow2`,
        IMPORTER_DESTINATION_PATH: destination,
        IMPORTER_TERMINATION_LOG: log,
        IMPORTER_METRICS_HOST: '127.0.0.1',
        IMPORTER_METRICS_PORT: String(port),
      });
      expect(code).toBe(EXIT.failed);
      expect(JSON.parse(readFileSync(log, 'utf8'))).toEqual({
        phase: 'Failed',
        reason: 'InternalError',
        message: `the metrics server cannot listen on 127.0.0.1:${port}: address already in use`,
      });
      expect(existsSync(destination)).toBe(false);
    } finally {
      holder.close();
    }
  });
});
