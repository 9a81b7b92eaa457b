/**
 * The environment the image (Dockerfile `ENV`) gives every unit's process besides NODE_ENV; the
 * benchmarks, tests and the local platform start node processes with it too, so they measure what ships.
 * MALLOC_ARENA_MAX=2: glibc keeps at most two malloc arenas instead of eight per core. Node allocates
 * its JS heap itself; what goes through malloc (TLS, HTTP parsing, zlib, Buffers) from the main thread
 * and the few pool threads then reuses freed memory instead of spreading over arenas that each keep
 * their own free pages (api-rewriter bench: peak RSS 77-78 MB against 79-84 MB).
 */
export const IMAGE_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2' };
