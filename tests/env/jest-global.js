// jest loads globalSetup/globalTeardown outside its module system, without moduleNameMapper, so the
// TypeScript sources (with `.js` import specifiers) are loaded through tsx's ESM loader instead.
import { tsImport } from 'tsx/esm/api';

export async function load(file) {
  return tsImport(file, import.meta.url);
}
