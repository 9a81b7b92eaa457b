import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isMainModule } from './is-main.js';

const dir = mkdtempSync(join(tmpdir(), 'is-main-'));
const real = join(dir, 'real');
const file = join(real, 'main.js');
const other = join(real, 'other.js');
const viaLink = join(dir, 'link', 'main.js');
mkdirSync(real);
writeFileSync(file, '');
writeFileSync(other, '');
symlinkSync(real, join(dir, 'link'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('isMainModule', () => {
  it('recognises the entry reached through a symlinked directory, as Node reports an ES module entry by its real path', () => {
    expect(isMainModule(pathToFileURL(file).href, viaLink)).toBe(true);
    expect(isMainModule(pathToFileURL(file).href, file)).toBe(true);
  });

  it('says no for another module, a missing entry and no entry at all', () => {
    expect(isMainModule(pathToFileURL(other).href, viaLink)).toBe(false);
    expect(isMainModule(pathToFileURL(file).href, join(dir, 'missing.js'))).toBe(false);
    expect(isMainModule(pathToFileURL(file).href, undefined)).toBe(false);
  });
});
