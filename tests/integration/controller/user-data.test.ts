/**
 * Cloud-init user data is limited as KubeVirt limits it, in bytes of UTF-8: a user whose non-ASCII
 * userData is within 2048 characters but past 2048 bytes is refused by our API with the reason, instead
 * of a VM that KubeVirt refuses later; data of exactly 2048 bytes runs.
 */
import { describe, expect, it } from '@jest/globals';
import { eventually } from './fixtures.js';
import { phaseIs, useWorld } from './world.js';

const t = useWorld('ctl-userdata');

describe('cloud-init user data size', () => {
  it('refuses non-ASCII userData past 2048 bytes at our API, naming the field and the limit', async () => {
    const userData = `#cloud-config\n# ${'ж'.repeat(1100)}\n`;
    expect([...userData].length).toBeLessThanOrEqual(2048);
    await expect(t.w.createVM('wide', { provisioning: { type: 'UserData', userData } })).rejects.toThrow(
      /spec\.provisioning\.userData.*exceeds 2048 byte limit; should use `userDataRef` for larger data/,
    );
    await expect(t.c.vms.get({ namespace: t.w.ns, name: 'wide' })).rejects.toThrow();
  });

  it('refuses an edit that grows userData past 2048 bytes, and the VM keeps running its old data', async () => {
    await t.w.createVM('grow', { runPolicy: 'AlwaysOn', provisioning: { type: 'UserData', userData: '#cloud-config\n' } });
    await t.w.vmWhen('grow', phaseIs('Running'), 'Running');
    await expect(
      t.c.vms.mergePatch({ namespace: t.w.ns, name: 'grow' }, { spec: { provisioning: { type: 'UserData', userData: 'é'.repeat(1025) } } }),
    ).rejects.toThrow(/spec\.provisioning\.userData/);
    const vm = await t.c.vms.get({ namespace: t.w.ns, name: 'grow' });
    expect(vm.spec.provisioning).toMatchObject({ userData: '#cloud-config\n' });
    expect(vm.status?.phase).toBe('Running');
  });

  it('runs a VM whose non-ASCII userData is exactly 2048 bytes', async () => {
    const userData = 'ж'.repeat(1024);
    expect(Buffer.byteLength(userData)).toBe(2048);
    await t.w.createVM('full', { runPolicy: 'AlwaysOn', provisioning: { type: 'UserData', userData } });
    await t.w.vmWhen('full', phaseIs('Running'), 'Running');
    await eventually(async () => (await t.c.kvvms.get({ namespace: t.w.ns, name: 'full' })).spec.template.spec.volumes?.length === 2, 'a cloud-init volume');
  });
});
