import { describe, expect, it } from '@jest/globals';
import { CloudEvent } from 'cloudevents';
import { parseConfig } from '../../shared/config/index.js';
import type { EventInput, KubeObject } from '../../shared/kube/index.js';
import { rootLogger } from '../../shared/log/index.js';
import { Registry } from '../../shared/metrics/index.js';
import type { FunctionDefinition, HandlerContext } from '../../shared/runtime/index.js';
import type { PreDeletePorts } from './act.js';
import type { TargetStore } from './cleanup.js';
import { preDeleteConfig, type PreDeleteConfig } from './config.js';
import { REFUSED_REASON, RemovalNotConfirmedError, type ModuleConfigObject } from './confirm.js';
import { preDelete, type PreDeleteState } from './index.js';
import { CleanupIncompleteError } from './report.js';

// Compile-time conformance: the export is a function declaration with this config and state.
const declaration = preDelete satisfies FunctionDefinition<typeof preDeleteConfig, PreDeleteState>;

const moduleConfig = (enabled: boolean | undefined): ModuleConfigObject => ({
  apiVersion: 'deckhouse.io/v1alpha1',
  kind: 'ModuleConfig',
  metadata: { name: 'virtualization', uid: 'u-1', resourceVersion: '7' },
  spec: enabled === undefined ? {} : { enabled },
});

/** Targets that never go away; the ModuleConfig as the apiserver has it, read by read; every call and Event recorded. */
function fakePorts(
  reads: Array<ModuleConfigObject | undefined>,
): PreDeletePorts & { calls: string[]; events: { record: (o: KubeObject, e: EventInput) => Promise<void> }; recorded: EventInput[] } {
  const calls: string[] = [];
  const recorded: EventInput[] = [];
  const store: TargetStore = {
    delete: (t) => (calls.push(`delete ${t.name}`), Promise.resolve(true)),
    exists: (t) => (calls.push(`exists ${t.name}`), Promise.resolve(true)),
  };
  return {
    calls,
    recorded,
    store,
    moduleConfigs: { get: () => (calls.push('get moduleconfig'), Promise.resolve(reads.length > 1 ? reads.shift() : reads[0])) },
    events: { record: (_o, e) => (recorded.push(e), Promise.resolve()) },
    close: () => undefined,
  };
}

function context(ports: PreDeletePorts, sender?: string): HandlerContext<PreDeleteConfig, PreDeleteState> {
  return {
    name: 'pre-delete',
    config: parseConfig(preDeleteConfig, { WAIT_TIMEOUT: '50ms', POLL_INTERVAL: '10ms' }),
    state: { ports, senders: undefined },
    log: rootLogger,
    metrics: new Registry(),
    signal: new AbortController().signal,
    sender,
  };
}

const moduleConfigEvent = (type: string, enabled: boolean): CloudEvent<unknown> =>
  new CloudEvent({ id: '1', source: '/apis/v1', type, data: { kind: 'ModuleConfig', metadata: { name: 'virtualization' }, spec: { enabled } } });
const DELETED = 'dev.knative.apiserver.resource.delete';
const UPDATED = 'dev.knative.apiserver.resource.update';

describe('the pre-delete function declaration', () => {
  it('handles CloudEvents only, with no plain routes, behind a sender check', () => {
    expect([declaration.name, typeof declaration.handle, declaration.routes, typeof declaration.senders]).toEqual([
      'pre-delete',
      'function',
      undefined,
      'function',
    ]);
  });

  it('leaves everything alone for a ModuleConfig update that keeps the module enabled, without asking the apiserver', async () => {
    const ports = fakePorts([moduleConfig(true)]);
    await expect(declaration.handle?.(moduleConfigEvent(UPDATED, true), context(ports))).resolves.toBeUndefined();
    expect(ports.calls).toEqual([]);
  });

  it('refuses a forged deletion event with 409 while the apiserver has the ModuleConfig enabled: nothing deleted, a Warning Event naming the sender', async () => {
    const ports = fakePorts([moduleConfig(true)]);
    const handled = declaration.handle?.(moduleConfigEvent(DELETED, false), context(ports, 'system:serviceaccount:evil:forger'));
    await expect(handled).rejects.toBeInstanceOf(RemovalNotConfirmedError);
    await expect(handled).rejects.toMatchObject({ status: 409, code: 'PRE_DELETE_NOT_CONFIRMED' });
    expect(ports.calls).toEqual(['get moduleconfig']);
    expect(ports.recorded).toEqual([expect.objectContaining({ type: 'Warning', reason: REFUSED_REASON })]);
    expect(ports.recorded[0]?.note).toContain("'system:serviceaccount:evil:forger'");
    expect(ports.recorded[0]?.note).toContain('spec.enabled: true');
  });

  it('refuses a disabling event when the ModuleConfig has no spec.enabled: false', async () => {
    const ports = fakePorts([moduleConfig(undefined)]);
    await expect(declaration.handle?.(moduleConfigEvent(UPDATED, false), context(ports))).rejects.toThrow('no spec.enabled: false');
    expect(ports.calls).toEqual(['get moduleconfig']);
  });

  it('cleans up when the apiserver agrees, and fails with the objects named when they outlive the deadline', async () => {
    const ports = fakePorts([moduleConfig(false)]);
    const handled = declaration.handle?.(moduleConfigEvent(UPDATED, false), context(ports));
    await expect(handled).rejects.toBeInstanceOf(CleanupIncompleteError);
    await expect(handled).rejects.toThrow('internalvirtualizationkubevirts.internal.virtualization.deckhouse.io d8-virtualization/config');
    expect(ports.calls.slice(0, 3).sort()).toEqual(['delete config', 'delete config', 'get moduleconfig']);
    expect(ports.calls.at(-1)).toBe('get moduleconfig');
  });

  it('answers 409 instead of giving up when the module was enabled again during the wait', async () => {
    const ports = fakePorts([undefined, moduleConfig(true)]);
    await expect(declaration.handle?.(moduleConfigEvent(DELETED, false), context(ports))).rejects.toThrow('checked again after the wait');
    expect(ports.calls.filter((c) => c === 'get moduleconfig')).toHaveLength(2);
  });
});
