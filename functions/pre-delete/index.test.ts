import { describe, expect, it } from '@jest/globals';
import { CloudEvent } from 'cloudevents';
import { parseConfig } from '../../shared/config/index.js';
import { rootLogger } from '../../shared/log/index.js';
import { Registry } from '../../shared/metrics/index.js';
import type { FunctionDefinition, HandlerContext } from '../../shared/runtime/index.js';
import type { TargetStore } from './cleanup.js';
import { preDeleteConfig, type PreDeleteConfig } from './config.js';
import { preDelete, type PreDeleteState } from './index.js';
import { CleanupIncompleteError } from './report.js';

// Compile-time conformance: the export is a function declaration with this config and state.
const declaration = preDelete satisfies FunctionDefinition<typeof preDeleteConfig, PreDeleteState>;

/** A store whose objects never go away, recording every call. */
function stuckStore(): PreDeleteState['store'] & { calls: string[] } {
  const calls: string[] = [];
  const store: TargetStore = {
    delete: (t) => (calls.push(`delete ${t.name}`), Promise.resolve(true)),
    exists: (t) => (calls.push(`exists ${t.name}`), Promise.resolve(true)),
  };
  return Object.assign(store, { calls, close: () => undefined });
}

function context(store: PreDeleteState['store']): HandlerContext<PreDeleteConfig, PreDeleteState> {
  return {
    name: 'pre-delete',
    config: parseConfig(preDeleteConfig, { WAIT_TIMEOUT: '50ms', POLL_INTERVAL: '10ms' }),
    state: { store },
    log: rootLogger,
    metrics: new Registry(),
    signal: new AbortController().signal,
  };
}

const moduleConfigEvent = (type: string, enabled: boolean): CloudEvent<unknown> =>
  new CloudEvent({ id: '1', source: '/apis/v1', type, data: { kind: 'ModuleConfig', metadata: { name: 'virtualization' }, spec: { enabled } } });

describe('the pre-delete function declaration', () => {
  it('handles CloudEvents only, with no plain routes', () => {
    expect([declaration.name, typeof declaration.handle, declaration.routes]).toEqual(['pre-delete', 'function', undefined]);
  });

  it('leaves everything alone for a ModuleConfig update that keeps the module enabled', async () => {
    const store = stuckStore();
    await expect(declaration.handle?.(moduleConfigEvent('dev.knative.apiserver.resource.update', true), context(store))).resolves.toBeUndefined();
    expect(store.calls).toEqual([]);
  });

  it('fails the request with the objects named when they outlive the deadline', async () => {
    const store = stuckStore();
    const handled = declaration.handle?.(moduleConfigEvent('dev.knative.apiserver.resource.update', false), context(store));
    await expect(handled).rejects.toBeInstanceOf(CleanupIncompleteError);
    await expect(handled).rejects.toThrow('internalvirtualizationkubevirts.internal.virtualization.deckhouse.io d8-virtualization/config');
    expect(store.calls.slice(0, 2).sort()).toEqual(['delete config', 'delete config']);
  });
});
