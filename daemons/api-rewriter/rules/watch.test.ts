import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { Readable } from 'node:stream';
import { KUBEVIRT_RULES, Renamer, WatchTransform, type WatchTransformOptions } from './index.js';

const r = new Renamer(KUBEVIRT_RULES);
const INT = 'internal.virtualization.deckhouse.io';

const event = (type: string, name: string): string =>
  JSON.stringify({
    type,
    object: { apiVersion: `${INT}/v1`, kind: 'InternalVirtualizationVirtualMachine', metadata: { name, labels: { [`kubevirt.${INT}/vm`]: name } } },
  }) + '\n';
const restored = (type: string, name: string): unknown => ({
  type,
  object: { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name, labels: { 'kubevirt.io/vm': name } } },
});

async function run(chunks: Buffer[], options: Partial<WatchTransformOptions> = {}): Promise<string> {
  const t = new WatchTransform(r, { mode: 'rewrite', direction: 'restore', ...options });
  const out: Buffer[] = [];
  await new Promise<void>((resolve, reject) => {
    Readable.from(chunks)
      .pipe(t)
      .on('data', (b: Buffer) => out.push(b))
      .on('end', resolve)
      .on('error', reject);
  });
  return Buffer.concat(out).toString('utf8');
}

const lines = (text: string): unknown[] =>
  text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as unknown);

describe('WatchTransform', () => {
  it('restores every event however the bytes are split into chunks', async () => {
    const input = Buffer.from(event('ADDED', 'a') + event('MODIFIED', 'b') + event('DELETED', 'c'));
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(fc.integer({ min: 1, max: input.length - 1 }), { maxLength: 8 }), async (cuts) => {
        const points = [0, ...cuts.sort((a, b) => a - b), input.length];
        const chunks = points.slice(1).map((end, i) => input.subarray(points[i], end));
        expect(lines(await run(chunks))).toEqual([restored('ADDED', 'a'), restored('MODIFIED', 'b'), restored('DELETED', 'c')]);
      }),
      { numRuns: 50 },
    );
  });

  it('emits each event as soon as its line is complete', async () => {
    const t = new WatchTransform(r, { mode: 'rewrite', direction: 'restore' });
    const got: string[] = [];
    t.on('data', (b: Buffer) => got.push(b.toString()));
    const e = event('ADDED', 'a');
    t.write(Buffer.from(e.slice(0, 10)));
    await new Promise((resolve) => setImmediate(resolve));
    expect(got).toEqual([]);
    t.write(Buffer.from(e.slice(10)));
    await new Promise((resolve) => setImmediate(resolve));
    expect(got.map((g) => JSON.parse(g) as unknown)).toEqual([restored('ADDED', 'a')]);
    t.end();
  });

  it('only touches type meta of BOOKMARK events', async () => {
    const bookmark =
      JSON.stringify({
        type: 'BOOKMARK',
        object: {
          apiVersion: `${INT}/v1`,
          kind: 'InternalVirtualizationVirtualMachine',
          metadata: { resourceVersion: '7', labels: { [`kubevirt.${INT}/x`]: '1' } },
        },
      }) + '\n';
    expect(lines(await run([Buffer.from(bookmark)]))).toEqual([
      {
        type: 'BOOKMARK',
        object: { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { resourceVersion: '7', labels: { [`kubevirt.${INT}/x`]: '1' } } },
      },
    ]);
  });

  it('drops a truncated last event and reports it, never sending a partial line', async () => {
    const truncated: number[] = [];
    const whole = event('ADDED', 'a');
    const text = await run([Buffer.from(whole + event('MODIFIED', 'b').slice(0, 30))], { onTruncated: (n) => truncated.push(n) });
    expect(lines(text)).toEqual([restored('ADDED', 'a')]);
    expect(text.endsWith('\n')).toBe(true);
    expect(truncated).toEqual([30]);
  });

  it('sends a last whole event that lacks its newline', async () => {
    expect(lines(await run([Buffer.from(event('ADDED', 'a').trimEnd())]))).toEqual([restored('ADDED', 'a')]);
  });

  it('passes a line that is not JSON through as it is and reports it', async () => {
    const invalid: string[] = [];
    const text = await run([Buffer.from('{"type":"ADDED","object":{' + '\n' + event('ADDED', 'a'))], { onInvalidLine: (l) => invalid.push(l.toString()) });
    expect(text.split('\n')[0]).toBe('{"type":"ADDED","object":{');
    expect(invalid).toHaveLength(1);
    expect(lines(text.split('\n').slice(1).join('\n'))).toEqual([restored('ADDED', 'a')]);
  });

  it('in inspect mode, passes events without renamed names byte for byte', async () => {
    const pod = '{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p",  "labels":{"app":"x"}}}}\n';
    const rewritten: boolean[] = [];
    expect(await run([Buffer.from(pod)], { mode: 'inspect', onEvent: (w) => rewritten.push(w) })).toBe(pod);
    expect(rewritten).toEqual([false]);
  });
});
