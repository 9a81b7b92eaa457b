/** Job entry: `node dist/functions/pre-delete/job.js` (knative/hooks/pre-delete/job.yaml). */
import { runJob } from './run-job.js';

const stop = new AbortController();
process.once('SIGTERM', () => stop.abort());
process.exitCode = await runJob(process.env, stop.signal);
