/**
 * A flood of unauthenticated requests, in a process of its own so that its client work does not slow
 * the measured client: FLOOD_CONNECTIONS connections POST FLOOD_BODY to FLOOD_URL without a credential,
 * back to back, until SIGTERM (a first line once the first request was refused 401); then one JSON line on stdout: requests, statuses and elapsed ms.
 */
import { runLoad } from './load.js';

const url = process.env['FLOOD_URL'];
const connections = Number(process.env['FLOOD_CONNECTIONS'] ?? '4');
if (url === undefined || !Number.isInteger(connections) || connections < 1) {
  process.stderr.write(`flood: FLOOD_URL (got ${String(url)}) and FLOOD_CONNECTIONS >= 1 (got ${String(process.env['FLOOD_CONNECTIONS'])}) are needed\n`);
  process.exit(2);
}
// One request first: the flood must be refused (a flood the function accepts measures something else).
const first = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: process.env['FLOOD_BODY'] ?? '[]' });
await first.arrayBuffer();
if (first.status !== 401) {
  process.stderr.write(`flood: expected 401 from ${url} without a credential, got ${first.status}\n`);
  process.exit(1);
}
process.stdout.write('{"flooding":true}\n');
const stop = new AbortController();
process.once('SIGTERM', () => stop.abort());
const result = await runLoad({
  url,
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: process.env['FLOOD_BODY'] ?? '[]',
  concurrency: connections,
  requests: Number.MAX_SAFE_INTEGER,
  maxMs: 3_600_000,
  signal: stop.signal,
});
process.stdout.write(`${JSON.stringify({ completed: result.completed, statuses: result.statuses, elapsedMs: result.elapsedMs })}\n`);
