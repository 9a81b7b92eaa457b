/**
 * One Node.js version in one place: `.node-version` names it (tests/env/node-binary.sh fetches that
 * binary for `npm test`, `npm start` and `npm run bench`); everything else that names a Node.js derives
 * from its major and is checked here, so a bump that misses one fails.
 */
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { BUNDLE_TARGET } from './index.js';

const root = resolve(import.meta.dirname, '../..');
const read = (file: string): string => readFileSync(join(root, file), 'utf8');
const version = read('.node-version').trim();
const major = version.split('.')[0] ?? '';

describe('the Node.js version', () => {
  it('.node-version is one exact version of an LTS line (an even major)', () => {
    expect(version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(Number(major) % 2).toBe(0);
  });

  it('the Dockerfile builds and runs on that major (node:NN-slim, distroless nodejsNN)', () => {
    const dockerfile = read('Dockerfile');
    expect(dockerfile).toMatch(new RegExp(`^ARG NODE_MAJOR=${major}$`, 'm'));
    expect(dockerfile).toContain('FROM node:${NODE_MAJOR}-slim AS build');
    expect(dockerfile).toContain('FROM gcr.io/distroless/nodejs${NODE_MAJOR}-debian12:nonroot');
  });

  it("package.json's engines and @types/node name that major", () => {
    const pkg = JSON.parse(read('package.json')) as { engines: { node: string }; devDependencies: Record<string, string> };
    expect(pkg.engines.node).toBe(`>=${major}`);
    expect(pkg.devDependencies['@types/node']).toMatch(new RegExp(`^\\^${major}\\.`));
  });

  it('the bundles are compiled for that major', () => {
    expect(BUNDLE_TARGET).toBe(`node${major}`);
  });

  it('the scripts behind npm test, npm start and npm run bench put the pinned binary first on PATH', () => {
    for (const script of ['tests/run-all.sh', 'platform/start.sh', 'tests/bench/run.sh']) {
      expect({ script, text: read(script) }).toEqual({
        script,
        text: expect.stringMatching(/NODE_BIN="\$\(bash tests\/env\/node-binary\.sh\)"[^\n]*\nexport PATH="\$NODE_BIN:\$PATH"/),
      });
    }
  });
});
