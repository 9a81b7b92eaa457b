import { load } from './jest-global.js';

export default async function teardown() {
  const mod = await load('./global-teardown.ts');
  await mod.default();
}
