import { afterEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { guestSync } from './guest-process.js';
import { JsonLinesClient } from './json-lines.js';

/** A guest agent on a unix socket that answers the first command after `stale` late answers of earlier exchanges; guest-sync with its id. */
async function agent(stale: number): Promise<{ path: string; server: Server; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'agent-'));
  const path = join(dir, 'agent.sock');
  const server = createServer((socket) => {
    let late = stale;
    socket.setEncoding('utf8');
    socket.on('data', (line: string) => {
      // The late answers come just before the answer to our first command, as the guest catches up.
      for (; late > 0; late--) socket.write(`{"return":${1000 + late}}\n`);
      const request = JSON.parse(line) as { execute: string; arguments?: { id?: number } };
      socket.write(`${JSON.stringify({ return: request.arguments?.id ?? {} })}\n`);
    });
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return { path, server, dir };
}

describe('guestSync (the guest agent channel)', () => {
  const open: { server: Server; dir: string; client: JsonLinesClient }[] = [];
  afterEach(() => {
    for (const o of open.splice(0)) {
      o.client.close();
      o.server.close();
      rmSync(o.dir, { recursive: true, force: true });
    }
  });

  it.each([0, 1, 5])('gets in step after %i late answers of earlier exchanges', async (stale) => {
    const a = await agent(stale);
    const client = await JsonLinesClient.connect(a.path, 'guest agent');
    open.push({ ...a, client });
    await expect(guestSync(client, 7, 2000)).resolves.toBeUndefined();
    expect(await client.execute('guest-ping', undefined, 2000)).toEqual({});
  });

  it('gives up, naming the id, when more late answers come than it skips', async () => {
    const a = await agent(40);
    const client = await JsonLinesClient.connect(a.path, 'guest agent');
    open.push({ ...a, client });
    await expect(guestSync(client, 7, 2000)).rejects.toThrow(/guest-sync 7 out of step/);
  });
});
