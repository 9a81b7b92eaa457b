/**
 * The uploader: one HTTP endpoint that receives one image (`PUT` or `POST /upload`, the body is the
 * image) and imports it like any other source. If no upload starts within UPLOADER_WAIT_TIMEOUT the
 * run fails with UploadTimeout. A transfer the client breaks off is discarded and the endpoint waits
 * again (with a fresh timeout); a complete upload that is rejected (checksum, not a disk image) is
 * answered 422 and ends the run as Failed, so the controller can report why.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listen } from '../../shared/http/listen.js';
import { ImportError, failureOf } from './errors.js';
import { importStream, type ImportContext, type ImportSuccess } from './run.js';

export const UPLOAD_PATH = '/upload';
export const HEALTH_PATH = '/healthz';

type State = 'waiting' | 'receiving' | 'done';

function reply(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent) return;
  res.writeHead(status, { 'content-type': 'application/json', connection: 'close', ...headers }).end(JSON.stringify(body));
}

export async function runUploader(ctx: ImportContext, onListening?: (port: number) => void): Promise<ImportSuccess> {
  const { config, log, signal } = ctx;
  let state: State = 'waiting';
  let timer: NodeJS.Timeout | undefined;
  let settle!: { resolve: (r: ImportSuccess) => void; reject: (e: unknown) => void };
  const outcome = new Promise<ImportSuccess>((resolve, reject) => (settle = { resolve, reject }));

  const armTimeout = (): void => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      if (state !== 'waiting') return;
      state = 'done';
      settle.reject(new ImportError('UploadTimeout', `no upload started within ${Math.round(config.UPLOADER_WAIT_TIMEOUT / 1000)} s`));
    }, config.UPLOADER_WAIT_TIMEOUT);
  };

  const receive = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    state = 'receiving';
    clearTimeout(timer);
    const length = req.headers['content-length'];
    const total = length !== undefined && /^\d+$/.test(length) ? Number(length) : undefined;
    log.info({ bytes: total ?? null, remote: req.socket.remoteAddress }, 'upload started');
    try {
      const result = await importStream({ body: req, total }, ctx);
      state = 'done';
      reply(res, 200, result);
      settle.resolve(result);
    } catch (err: unknown) {
      // A decision about the content (too large, checksum, format) ends the run even mid-body.
      const decided = err instanceof ImportError && err.reason !== 'SourceUnreachable';
      if (!req.complete && !decided && !signal.aborted) {
        // The client went away (or sent less than it announced): nothing was decided about the image.
        log.warn({ err }, 'upload broke off; waiting for a new one');
        reply(res, 400, { reason: 'UploadInterrupted', message: 'the upload broke off before the whole body arrived; upload again' });
        state = 'waiting';
        armTimeout();
        return;
      }
      state = 'done';
      const failure = failureOf(err);
      reply(res, failure.reason === 'InternalError' ? 500 : 422, failure);
      settle.reject(err);
    }
  };

  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === HEALTH_PATH && req.method === 'GET') return reply(res, 200, { status: 'ok', state });
    if (path !== UPLOAD_PATH) return reply(res, 404, { message: `not found; upload to ${UPLOAD_PATH}` });
    if (req.method !== 'PUT' && req.method !== 'POST') return reply(res, 405, { message: 'upload with PUT or POST' }, { allow: 'PUT, POST' });
    if (state !== 'waiting') {
      req.resume();
      return reply(res, 409, { message: state === 'receiving' ? 'an upload is already in progress' : 'the upload is finished' });
    }
    void receive(req, res);
  });
  // A stalled client must not hold the endpoint forever.
  server.requestTimeout = 0;
  server.timeout = config.IMPORTER_HTTP_TIMEOUT;

  const port = await listen(server, config.UPLOADER_HOST, config.UPLOADER_PORT, 'the upload endpoint');
  log.info({ port, path: UPLOAD_PATH }, 'uploader listening');
  onListening?.(port);
  armTimeout();
  const onAbort = (): void => {
    state = 'done';
    settle.reject(new ImportError('Interrupted', 'the uploader was stopped'));
  };
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    return await outcome;
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }
}
