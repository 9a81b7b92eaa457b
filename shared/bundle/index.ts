/**
 * Entry modules bundled with esbuild into one ESM file each, for start-up: node then loads and
 * compiles one file instead of resolving, reading (and with tsx, transforming) every module. Used by
 * the local platform (platform/units.ts) and the function-host benchmark.
 */
import { join } from 'node:path';
import { build } from 'esbuild';

/**
 * `external`: npm packages stay imports (the bundle must then live inside the repository, where they
 * resolve); `bundled`: they are inlined too, so the bundle is self-contained but for node's builtins.
 */
export type PackageMode = 'external' | 'bundled';

export interface BundleSpec {
  /** The directory entries are relative to (the repository root). */
  readonly root: string;
  /** Entry files relative to `root`, e.g. `functions/audit/index.ts`. */
  readonly entries: readonly string[];
  /** Bundles go to `outdir/<entry with .mjs>`. */
  readonly outdir: string;
  readonly packages: PackageMode;
  /** Write `.map` files next to the bundles (run them with `--enable-source-maps`). */
  readonly sourcemap?: boolean;
}

/**
 * CommonJS packages inlined into an ESM bundle still call `require` for node's builtins; ESM has no
 * `require`, so the bundle makes one.
 */
const REQUIRE_SHIM = "import { createRequire as __bundleCreateRequire } from 'node:module'; const require = __bundleCreateRequire(import.meta.url);";

/** Bundle every entry; resolves with entry (as given) → bundle file. Throws esbuild's error on failure. */
export async function bundleEntries(spec: BundleSpec): Promise<ReadonlyMap<string, string>> {
  await build({
    entryPoints: spec.entries.map((e) => join(spec.root, e)),
    outbase: spec.root,
    outdir: spec.outdir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    ...(spec.packages === 'external' ? { packages: 'external' as const } : { banner: { js: REQUIRE_SHIM } }),
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: spec.sourcemap === true,
    logLevel: 'silent',
  });
  return new Map(spec.entries.map((e) => [e, bundledPath(spec.outdir, e)]));
}

/** Where `bundleEntries` writes the bundle of `entry`. */
export function bundledPath(outdir: string, entry: string): string {
  return join(outdir, entry.replace(/\.ts$/, '.mjs'));
}
