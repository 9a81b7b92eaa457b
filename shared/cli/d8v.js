#!/usr/bin/env node
// The `d8v` command (package.json "bin"). In a checkout (dev dependencies installed) it runs the
// TypeScript source through tsx, so it is never stale; in an installation without tsx, the compiled
// CLI under dist/ (`npm run build`).
let register;
try {
  ({ register } = await import('tsx/esm/api'));
} catch {
  register = undefined;
}
if (register !== undefined) {
  register();
  await import('./main.ts');
} else {
  await import('../../dist/shared/cli/main.js');
}
