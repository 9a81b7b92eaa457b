import { describe, expect, it } from '@jest/globals';
import type { Snapshot } from './snapshot.js';
import { changes, frame, renderScreen, table } from './view.js';

const snap = (over: Partial<Snapshot> = {}): Snapshot => ({
  vms: [
    { namespace: 'demo', name: 'vm', phase: 'Running', node: 'node-1', ip: '10.66.0.1', conditions: ['Running', '!AgentReady', 'VirtualMachineClassReady'] },
  ],
  operations: [{ namespace: 'demo', name: 'mig', type: 'Migrate', vm: 'vm', phase: 'InProgress', detail: 'Syncing' }],
  nodes: [
    { name: 'node-1', ready: true, launcherPods: 1 },
    { name: 'node-2', ready: false, launcherPods: 0 },
  ],
  audit: [{ datetime: '2026-12-03T09:07:10Z', type: 'Manage VM', name: "Virtual machine 'vm' has been created by 'alice'" }],
  ...over,
});

describe('the live view', () => {
  it('aligns columns', () => {
    expect(
      table(
        ['A', 'LONGER'],
        [
          ['xyz', '1'],
          ['', '22'],
        ],
      ),
    ).toEqual(['A    LONGER', 'xyz  1', '     22']);
  });

  it('shows units, nodes, VMs with phase, node, IP and conditions, operations, audit records and the demo steps', () => {
    const lines = renderScreen(
      { server: 'https://127.0.0.1:1', kubeconfig: '/k', logDir: '/w', uptimeMs: 65_000, units: { controller: true, audit: false } },
      snap(),
      ['▶ one', '✓ two'],
    );
    const text = lines.join('\n');
    expect(text).toContain('up 1:05');
    expect(text).toContain('units: controller ●  audit ✗');
    expect(text).toContain('node-1 ● (1 VM)  node-2 ○');
    expect(text).toMatch(/demo +vm +Running +node-1 +10\.66\.0\.1 +Running !AgentReady ClassReady$/m);
    expect(text).toMatch(/demo +mig +Migrate +vm +InProgress +Syncing/);
    expect(text).toContain("09:07:10  Manage VM            Virtual machine 'vm' has been created by 'alice'");
    expect(lines.slice(-3)).toEqual(['DEMO', '  ▶ one', '  ✓ two']);
  });

  it('keeps only the demo steps that fit the terminal', () => {
    const steps = Array.from({ length: 50 }, (_, i) => `step ${i}`);
    const lines = renderScreen({ server: '', kubeconfig: '', logDir: '', uptimeMs: 0, units: {} }, snap(), steps, 30);
    expect(lines.length).toBeLessThanOrEqual(29);
    expect(lines.at(-1)).toBe('  step 49');
  });

  it('prints one line per change in plain mode', () => {
    const before = snap();
    const after = snap({
      vms: [{ ...before.vms[0], phase: 'Migrating' }],
      audit: [...before.audit, { datetime: '2026-12-03T09:07:12Z', type: 'Control VM', name: "Virtual machine 'vm' has been migrated by 'alice'" }],
    });
    expect(changes(before, after)).toEqual([
      'vm demo/vm: Migrating on node-1 ip 10.66.0.1 [Running !AgentReady VirtualMachineClassReady]',
      "audit: Control VM: Virtual machine 'vm' has been migrated by 'alice'",
    ]);
    expect(changes(after, after)).toEqual([]);
  });

  it('redraws in place: home, each line cut to the width and cleared to its end', () => {
    expect(frame(['abcdef', 'xy'], 4, false)).toBe('\x1b[Habc…\x1b[K\nxy\x1b[K\n\x1b[J');
    expect(frame([], 4, true).startsWith('\x1b[2J')).toBe(true);
  });
});
