/**
 * The HTTP server of the importer benchmark as its own process (a real download crosses processes;
 * in one process server and importer would share one thread): serves the directory given as the
 * first argument and prints its URL as the first line of stdout.
 */
import { serveDir } from '../../shared/testing/disk-images.js';
import { print } from './lib.js';

const dir = process.argv[2];
if (dir === undefined) throw new Error('usage: importer-server.ts DIR');
const server = await serveDir(dir);
print(server.url);
process.once('SIGTERM', () => void server.close().then(() => process.exit(0)));
