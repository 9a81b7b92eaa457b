import { describe, expect, it } from '@jest/globals';
import { decidePower, parseGuestEvent, runStrategyFor, type PowerInput, type RunPolicy } from './power.js';

const base: PowerInput = { runPolicy: 'Manual', startRequested: false, requestsPending: false, kubevirtStarts: false };
const vmi = (phase: string, deleting = false): PowerInput['vmi'] => ({ uid: 'u1', phase, deleting });

describe('decidePower: runPolicy semantics', () => {
  it.each<[string, RunPolicy, Partial<PowerInput>, string]>([
    // AlwaysOff: any instance is stopped.
    ['AlwaysOff stops a running instance', 'AlwaysOff', { vmi: vmi('Running') }, 'stop'],
    ['AlwaysOff leaves a stopped VM alone', 'AlwaysOff', {}, 'none'],
    ['AlwaysOff ignores a start request', 'AlwaysOff', { startRequested: true }, 'none'],
    // AlwaysOn: always running, every guest end restarts.
    ['AlwaysOn starts a stopped VM', 'AlwaysOn', {}, 'start'],
    ['AlwaysOn restarts after a guest shutdown', 'AlwaysOn', { vmi: vmi('Succeeded'), guestEvent: 'guest-shutdown' }, 'restart'],
    ['AlwaysOn restarts after a guest reset', 'AlwaysOn', { vmi: vmi('Succeeded'), guestEvent: 'guest-reset' }, 'restart'],
    ['AlwaysOn restarts a failed instance', 'AlwaysOn', { vmi: vmi('Failed') }, 'restart'],
    ['AlwaysOn leaves a running instance alone', 'AlwaysOn', { vmi: vmi('Running') }, 'none'],
    // Manual: only on request; reset restarts, shutdown stops.
    ['Manual does not start by itself', 'Manual', {}, 'none'],
    ['Manual starts on a start request', 'Manual', { startRequested: true }, 'start'],
    ['Manual restarts after a guest reset', 'Manual', { vmi: vmi('Succeeded'), guestEvent: 'guest-reset' }, 'restart'],
    ['Manual stops after a guest shutdown', 'Manual', { vmi: vmi('Succeeded'), guestEvent: 'guest-shutdown' }, 'stop'],
    ['Manual stops a failed instance', 'Manual', { vmi: vmi('Failed') }, 'stop'],
    // AlwaysOnUnlessStoppedManually: KubeVirt does the first start; shutdown keeps it off.
    ['AOUSM leaves the first start to KubeVirt', 'AlwaysOnUnlessStoppedManually', { kubevirtStarts: true }, 'none'],
    ['AOUSM stays stopped after a manual stop', 'AlwaysOnUnlessStoppedManually', {}, 'none'],
    ['AOUSM starts on a start request', 'AlwaysOnUnlessStoppedManually', { startRequested: true }, 'start'],
    ['AOUSM stops after a guest shutdown', 'AlwaysOnUnlessStoppedManually', { vmi: vmi('Succeeded'), guestEvent: 'guest-shutdown' }, 'stop'],
    ['AOUSM restarts after a guest reset', 'AlwaysOnUnlessStoppedManually', { vmi: vmi('Succeeded'), guestEvent: 'guest-reset' }, 'restart'],
    ['AOUSM restarts an instance that ended otherwise (evicted)', 'AlwaysOnUnlessStoppedManually', { vmi: vmi('Succeeded') }, 'restart'],
    ['AOUSM restarts a failed instance', 'AlwaysOnUnlessStoppedManually', { vmi: vmi('Failed') }, 'restart'],
    // Requests.
    ['a requested restart of this instance restarts it', 'Manual', { vmi: vmi('Running'), restartRequestedFor: 'u1' }, 'restart'],
    ['a requested restart of an older instance is done', 'Manual', { vmi: vmi('Running'), restartRequestedFor: 'u0' }, 'none'],
    ['nothing happens while KubeVirt has requests pending', 'AlwaysOn', { requestsPending: true }, 'none'],
    ['nothing happens to an instance being deleted', 'AlwaysOn', { vmi: vmi('Running', true) }, 'none'],
  ])('%s', (_what, runPolicy, input, action) => {
    expect(decidePower({ ...base, runPolicy, ...input }).kind).toBe(action);
  });
});

describe('runStrategyFor', () => {
  it.each<[string, Parameters<typeof runStrategyFor>[0], string]>([
    [
      'AOUSM creates with Always',
      { runPolicy: 'AlwaysOnUnlessStoppedManually', kvvmExists: false, currentRunStrategy: undefined, vmiExists: false, previousRunPolicy: undefined },
      'Always',
    ],
    [
      'AOUSM keeps Always until the first instance',
      {
        runPolicy: 'AlwaysOnUnlessStoppedManually',
        kvvmExists: true,
        currentRunStrategy: 'Always',
        vmiExists: false,
        previousRunPolicy: 'AlwaysOnUnlessStoppedManually',
      },
      'Always',
    ],
    [
      'AOUSM switches to Manual once an instance exists',
      {
        runPolicy: 'AlwaysOnUnlessStoppedManually',
        kvvmExists: true,
        currentRunStrategy: 'Always',
        vmiExists: true,
        previousRunPolicy: 'AlwaysOnUnlessStoppedManually',
      },
      'Manual',
    ],
    [
      'AOUSM after a manual stop stays Manual',
      {
        runPolicy: 'AlwaysOnUnlessStoppedManually',
        kvvmExists: true,
        currentRunStrategy: 'Manual',
        vmiExists: false,
        previousRunPolicy: 'AlwaysOnUnlessStoppedManually',
      },
      'Manual',
    ],
    [
      'switching from AlwaysOff to AOUSM starts it',
      { runPolicy: 'AlwaysOnUnlessStoppedManually', kvvmExists: true, currentRunStrategy: 'Manual', vmiExists: false, previousRunPolicy: 'AlwaysOff' },
      'Always',
    ],
    [
      'AlwaysOn is driven by the controller (Manual)',
      { runPolicy: 'AlwaysOn', kvvmExists: false, currentRunStrategy: undefined, vmiExists: false, previousRunPolicy: undefined },
      'Manual',
    ],
    [
      'AlwaysOff is Manual',
      { runPolicy: 'AlwaysOff', kvvmExists: true, currentRunStrategy: 'Always', vmiExists: true, previousRunPolicy: undefined },
      'Manual',
    ],
  ])('%s', (_what, input, expected) => {
    expect(runStrategyFor(input)).toBe(expected);
  });
});

describe('parseGuestEvent', () => {
  it.each([
    ['{"event":"SHUTDOWN","reason":"guest-reset"}', 'guest-reset'],
    ['{"event":"SHUTDOWN","reason":"guest-shutdown"}', 'guest-shutdown'],
    ['something else', undefined],
    [undefined, undefined],
  ])('reads %j as %j', (message, event) => {
    expect(parseGuestEvent(message)).toBe(event);
  });
});
