/**
 * Entry modules bundled with esbuild into one file each, for start-up: node then loads and compiles
 * one file instead of resolving, reading (and with tsx, transforming) every module. Used by the image
 * (Dockerfile, through cli.ts), the local platform (platform/units.ts) and the benchmarks.
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { build, type Plugin } from 'esbuild';
import { IMAGE_ENV } from './image-env.js';

const run = promisify(execFile);

/**
 * `external`: npm packages stay imports (the bundle must then live inside the repository, where they
 * resolve); an ESM file, `<entry>.mjs`. `bundled`: they are inlined too, so the unit needs nothing but
 * node; three files (see LOADER): `<entry>.cjs`, the start-up file, `<entry>.code.cjs`, the code, and
 * `<entry>.code-cache`, V8's compiled form of it.
 */
export type PackageMode = 'external' | 'bundled';

export interface BundleSpec {
  /** The directory entries are relative to (the repository root). */
  readonly root: string;
  /** Entry files relative to `root`, e.g. `functions/audit/index.ts`. */
  readonly entries: readonly string[];
  /** Bundles go to `outdir/<entry with .mjs or .cjs>`. */
  readonly outdir: string;
  readonly packages: PackageMode;
  /** Write `.map` files next to the bundles (run them with `--enable-source-maps`). */
  readonly sourcemap?: boolean;
}

/** The Node.js the bundles run on: the major of `.node-version` (shared/bundle/node-version.test.ts checks it). */
export const BUNDLE_TARGET = 'node26';

/** What `import.meta.url` becomes in a `bundled` unit's code: the start-up file's URL (LOADER). */
const BUNDLE_URL = '__bundleUrl';

/**
 * A `bundled` unit's start-up file. Node keeps no compiled code between runs by default, and compiling a
 * unit's 1.5 MB of code is about a fifth of its cold start; so the code is CommonJS, compiled here
 * with `vm.compileFunction` and the code cache made when it was bundled (V8 checks that the cache
 * matches this node, its V8 flags and the source, and compiles from scratch otherwise). The code then
 * runs as if it were this file (`require`, `module`, and `import.meta.url` = this file's URL, which
 * `runIfMain`/`runDaemonIfMain` compare with the process's entry). `vm.Script` with a wrapper was
 * tried: its cache can be made after the modules ran (5 ms faster starts) but the unit kept 3.5 MB
 * more resident memory.
 * `BUNDLE_CODE_CACHE=write` writes the cache and exits (bundleEntries; the Dockerfile again with the
 * runtime image's node); `BUNDLE_CODE_CACHE=check` prints whether it is used and exits.
 */
const LOADER = `'use strict';
// Start-up file of a bundled unit: see LOADER in shared/bundle/index.ts.
const { readFileSync, writeFileSync } = require('node:fs');
const { compileFunction } = require('node:vm');
const { pathToFileURL } = require('node:url');
const code = __filename.replace(/\\.cjs$/, '.code.cjs');
const cache = __filename.replace(/\\.cjs$/, '.code-cache');
const mode = process.env.BUNDLE_CODE_CACHE;
let cachedData;
try {
  cachedData = mode === 'write' ? undefined : readFileSync(cache);
} catch {
  cachedData = undefined;
}
const params = ['exports', 'require', 'module', '__filename', '__dirname', '${BUNDLE_URL}'];
const unit = compileFunction(readFileSync(code, 'utf8'), params, { filename: code, cachedData, produceCachedData: mode === 'write' });
if (mode === 'write') {
  writeFileSync(cache, unit.cachedData);
} else if (mode === 'check') {
  process.stdout.write(cachedData === undefined ? 'missing\\n' : unit.cachedDataRejected ? 'rejected\\n' : 'used\\n');
} else {
  unit(exports, require, module, __filename, __dirname, pathToFileURL(__filename).href);
}
`;

/**
 * @kubernetes/client-node's `KubeConfig` without the generated API. Our units take only `KubeConfig`
 * from the package (shared/kube/kubeconfig.ts); its module imports two names from the index of the
 * generated API (`./gen/index.js`: every resource's class and client), and esbuild, told nothing of
 * side effects by the package, would bundle and load all of it: about 1 MB of code per unit, and
 * 5.8 MiB more resident memory at the audit's first answer (tests/bench/RESULTS.md, function-host,
 * 2026-12-07: 97.8 against 92.0 MiB). That one import is
 * pointed at the two modules that define those names. Should a new client-node import more from
 * there, the build fails naming the missing export: never a unit that breaks at run time.
 */
const CLIENT_NODE_CONFIG = /[\\/]node_modules[\\/]@kubernetes[\\/]client-node[\\/]dist[\\/]config\.js$/;
const KUBECONFIG_ONLY = 'client-node-kubeconfig-only';
const clientNodeKubeConfigOnly: Plugin = {
  name: KUBECONFIG_ONLY,
  setup(b) {
    b.onResolve({ filter: /^\.\/gen\/index\.js$/ }, (args) =>
      CLIENT_NODE_CONFIG.test(args.importer) ? { path: join(dirname(args.importer), 'gen', 'index.js'), namespace: KUBECONFIG_ONLY } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: KUBECONFIG_ONLY }, (args) => ({
      resolveDir: dirname(args.path),
      loader: 'js',
      contents: "export { createConfiguration } from './configuration.js';\nexport { ServerConfiguration } from './servers.js';\n",
    }));
  },
};

/** Bundle every entry; resolves with entry (as given) → the file node runs. Throws esbuild's error on failure. */
export async function bundleEntries(spec: BundleSpec): Promise<ReadonlyMap<string, string>> {
  const bundled = spec.packages === 'bundled';
  await build({
    entryPoints: spec.entries.map((e) => join(spec.root, e)),
    outbase: spec.root,
    outdir: spec.outdir,
    outExtension: { '.js': bundled ? '.code.cjs' : '.mjs' },
    bundle: true,
    ...(bundled
      ? { format: 'cjs', define: { 'import.meta.url': BUNDLE_URL }, plugins: [clientNodeKubeConfigOnly] }
      : { format: 'esm', packages: 'external' as const }),
    platform: 'node',
    target: BUNDLE_TARGET,
    sourcemap: spec.sourcemap === true,
    logLevel: 'silent',
  });
  const files = new Map(spec.entries.map((e) => [e, bundledPath(spec.outdir, e, spec.packages)]));
  if (bundled) {
    for (const file of files.values()) {
      await writeFile(file, LOADER);
      await writeCodeCache(file);
    }
  }
  return files;
}

/**
 * (Re)write the code cache of a `bundled` unit's start-up file with this node, as the image runs it:
 * IMAGE_ENV, and as NODE_OPTIONS only `nodeOptions`, the V8 flags the unit will run with (they are
 * part of what the cache must match; the image takes them as the build arg NODE_OPTIONS).
 */
export async function writeCodeCache(startFile: string, nodeOptions?: string): Promise<void> {
  await run(process.execPath, [startFile], { env: codeCacheEnv('write', nodeOptions) });
}

/** Whether a `bundled` unit started with the V8 flags `nodeOptions` would use its code cache. */
export async function codeCacheState(startFile: string, nodeOptions?: string): Promise<'used' | 'rejected' | 'missing'> {
  const { stdout } = await run(process.execPath, [startFile], { env: codeCacheEnv('check', nodeOptions) });
  const state = stdout.trim();
  if (state !== 'used' && state !== 'rejected' && state !== 'missing') throw new Error(`${startFile} says of its code cache: ${state}`);
  return state;
}

function codeCacheEnv(mode: 'write' | 'check', nodeOptions: string | undefined): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...IMAGE_ENV, BUNDLE_CODE_CACHE: mode };
  delete env['NODE_OPTIONS'];
  if (nodeOptions !== undefined && nodeOptions !== '') env['NODE_OPTIONS'] = nodeOptions;
  return env;
}

/** Where `bundleEntries` writes the file node runs for `entry`. */
export function bundledPath(outdir: string, entry: string, packages: PackageMode): string {
  return join(outdir, entry.replace(/\.ts$/, packages === 'bundled' ? '.cjs' : '.mjs'));
}

/** The files of a `bundled` unit besides its start-up file (the Dockerfile copies all three). */
export function bundledCompanions(startFile: string): { readonly code: string; readonly cache: string } {
  return { code: startFile.replace(/\.cjs$/, '.code.cjs'), cache: startFile.replace(/\.cjs$/, '.code-cache') };
}
