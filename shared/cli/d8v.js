#!/usr/bin/env node
// The `d8v` command (package.json "bin"): the compiled CLI when built (dist/), else the TypeScript
// source through tsx (a checkout with dev dependencies).
import { existsSync } from 'node:fs';
import { URL, fileURLToPath } from 'node:url';

const built = fileURLToPath(new URL('../../dist/shared/cli/main.js', import.meta.url));
if (existsSync(built)) {
  await import(built);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('./main.ts');
}
