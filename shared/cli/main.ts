/**
 * The `d8v` process: runs one command line with the real terminal, turns Ctrl-C / SIGTERM into a
 * clean stop (a second one exits at once) and exits with the command's code (README.md).
 */
import { ExitCode } from './exit-codes.js';
import { run } from './program.js';

const stop = new AbortController();
const onSignal = (): void => {
  if (stop.signal.aborted) process.exit(ExitCode.interrupted);
  stop.abort();
};
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);

const self = [process.execPath, ...process.execArgv, process.argv[1] ?? ''];
const code = await run(process.argv.slice(2), { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr }, { signal: stop.signal, self });
process.exitCode = code;
// Sessions may leave sockets or stdin referenced; the command is done.
process.stdout.write('', () => process.exit(code));
