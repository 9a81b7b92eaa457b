import { load } from './jest-global.js';

export default async function setup() {
  const mod = await load('./global-setup.ts');
  await mod.default();
}
