/**
 * The VM provisioning handler on its own: the Secret a VM's provisioning references must exist and
 * carry one of the keys of its type (ProvisioningReady), else the VM waits for it.
 */
import { describe, expect, it } from '@jest/globals';
import type { VirtualMachine } from '../../../../../shared/api/resources/virtualmachine.js';
import { UnavailableError } from '../../../../../shared/errors/index.js';
import { vm as vmOf } from '../../../../../tests/integration/controller/builders.js';
import type { Secret } from '../../../kube/resources.js';
import { handlerContext, inMemoryDeps } from '../../../testing/in-memory.js';
import { initVMState } from '../index.js';
import { provisioningHandler } from './provisioning.js';

type Provisioning = VirtualMachine['spec']['provisioning'];
const vm = (provisioning: Provisioning): VirtualMachine => vmOf({ namespace: 'ns', id: 'unit' }, 'web', 'generic', provisioning ? { provisioning } : {});
const secret = (name: string, data: Record<string, string>): Secret => ({ apiVersion: 'v1', kind: 'Secret', metadata: { namespace: 'ns', name }, data });
const userDataRef = (name: string): Provisioning => ({ type: 'UserDataRef', userDataRef: { kind: 'Secret', name } });
const sysprepRef = (name: string): Provisioning => ({ type: 'SysprepRef', sysprepRef: { kind: 'Secret', name } });

interface Row {
  what: string;
  provisioning: Provisioning;
  secrets?: Secret[];
  ready: { status: string; reason: string } | 'none';
  waiting?: RegExp;
}

describe('the VM provisioning handler', () => {
  it.each<Row>([
    { what: 'has no condition without provisioning', provisioning: undefined, ready: 'none' },
    {
      what: 'is ready with inline user data',
      provisioning: { type: 'UserData', userData: '#cloud-config' },
      ready: { status: 'True', reason: 'ProvisioningReady' },
    },
    {
      what: 'is ready with a user-data Secret holding userData',
      provisioning: userDataRef('cloud'),
      secrets: [secret('cloud', { userData: 'eA==' })],
      ready: { status: 'True', reason: 'ProvisioningReady' },
    },
    {
      what: 'accepts the lower-case userdata key',
      provisioning: userDataRef('cloud'),
      secrets: [secret('cloud', { userdata: 'eA==' })],
      ready: { status: 'True', reason: 'ProvisioningReady' },
    },
    {
      what: 'waits for a Secret that does not exist',
      provisioning: userDataRef('cloud'),
      ready: { status: 'False', reason: 'ProvisioningNotReady' },
      waiting: /Secret cloud not found/,
    },
    {
      what: 'waits for a Secret without the expected key',
      provisioning: userDataRef('cloud'),
      secrets: [secret('cloud', { other: 'eA==' })],
      ready: { status: 'False', reason: 'ProvisioningNotReady' },
      waiting: /Secret cloud has none of the keys userData, userdata/,
    },
    {
      what: 'is ready with a sysprep Secret holding unattend.xml',
      provisioning: sysprepRef('win'),
      secrets: [secret('win', { 'unattend.xml': 'eA==' })],
      ready: { status: 'True', reason: 'ProvisioningReady' },
    },
    {
      what: 'waits for a sysprep Secret that holds user data instead',
      provisioning: sysprepRef('win'),
      secrets: [secret('win', { userData: 'eA==' })],
      ready: { status: 'False', reason: 'ProvisioningNotReady' },
      waiting: /none of the keys autounattend.xml, unattend.xml/,
    },
  ])('$what', async (row) => {
    const { deps } = inMemoryDeps({ seed: { secrets: row.secrets ?? [] } });
    const state = initVMState(vm(row.provisioning));
    state.status.conditions = [
      { type: 'ProvisioningReady', status: 'False', reason: 'ProvisioningNotReady', message: 'old', lastTransitionTime: '2026-01-01T00:00:00Z' },
    ];

    await provisioningHandler(deps).handle(state, handlerContext());

    const cond = state.status.conditions?.find((c) => c.type === 'ProvisioningReady');
    if (row.ready === 'none') expect(cond).toBeUndefined();
    else expect(cond).toMatchObject(row.ready);
    if (row.waiting) {
      expect(cond?.message).toMatch(row.waiting);
      expect(state.waitingFor.join('\n')).toMatch(row.waiting);
    } else expect(state.waitingFor).toEqual([]);
  });

  it('fails the pass (for a retry) when the Secret cannot be read, rather than calling it missing', async () => {
    const { deps } = inMemoryDeps();
    deps.clients.secrets.get = () => Promise.reject(new UnavailableError('apiserver down'));
    await expect(provisioningHandler(deps).handle(initVMState(vm(userDataRef('cloud'))), handlerContext())).rejects.toBeInstanceOf(UnavailableError);
  });
});
