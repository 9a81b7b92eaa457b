import { describe, expect, it } from '@jest/globals';
import type { GuestSockets } from '../virt-api/guest-stream.js';
import { withSimulatedGuests, type SimulatedFreeze } from './fs-freeze.js';

describe('withSimulatedGuests (what the stand-in reaches in npm start)', () => {
  const real: GuestSockets = {
    socketOf: (_ns, name, kind) => (name === 'real' ? `/guests/${name}.${kind}` : undefined),
    fsFreeze: (_ns, name) => Promise.resolve(name === 'real' ? 'done' : 'no-guest'),
    forwardPort: (_ns, name, port) => (name === 'real' ? Promise.resolve(40_000 + port) : undefined),
  };
  const frozenSimulated: string[] = [];
  const simulated: SimulatedFreeze = {
    fsFreeze: (_ns, name, action) => {
      frozenSimulated.push(`${name} ${action}`);
      return Promise.resolve('done');
    },
    stop: () => undefined,
  };

  it("passes a real guest's console, screen and port-forward on, and freezes a VM without one as a simulated guest", async () => {
    const guests = withSimulatedGuests(real, simulated);
    expect([guests.socketOf('ns', 'real', 'serial'), guests.socketOf('ns', 'real', 'vnc'), guests.socketOf('ns', 'sim', 'serial')]).toEqual([
      '/guests/real.serial',
      '/guests/real.vnc',
      undefined,
    ]);
    await expect(guests.forwardPort('ns', 'real', 22)).resolves.toBe(40_022);
    expect(guests.forwardPort('ns', 'sim', 22)).toBeUndefined();
    await expect(guests.fsFreeze('ns', 'real', 'freeze')).resolves.toBe('done');
    await expect(guests.fsFreeze('ns', 'sim', 'freeze')).resolves.toBe('done');
    expect(frozenSimulated).toEqual(['sim freeze']);
  });

  it('without real guests: no sockets, no port-forward target (the stand-in echoes), every freeze simulated', async () => {
    const guests = withSimulatedGuests(undefined, simulated);
    expect(guests.socketOf('ns', 'real', 'serial')).toBeUndefined();
    expect(guests.forwardPort('ns', 'real', 22)).toBeUndefined();
    frozenSimulated.length = 0;
    await guests.fsFreeze('ns', 'real', 'thaw');
    expect(frozenSimulated).toEqual(['real thaw']);
  });
});
