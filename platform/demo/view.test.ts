import { describe, expect, it } from '@jest/globals';
import type { Snapshot } from './snapshot.js';
import { changes, frame, progressBar, renderScreen, table } from './view.js';

const snap = (over: Partial<Snapshot> = {}): Snapshot => ({
  vms: [
    { namespace: 'demo', name: 'vm', phase: 'Running', node: 'node-1', ip: '10.66.0.1', conditions: ['Running', '!AgentReady', 'VirtualMachineClassReady'] },
  ],
  storage: [
    { kind: 'image', namespace: 'demo', name: 'img', phase: 'Provisioning', progress: '31%', detail: 'Provisioning' },
    { kind: 'disk', namespace: 'demo', name: 'root', phase: 'Pending', progress: '', detail: 'ImageNotReady' },
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
      {
        server: 'https://127.0.0.1:1',
        kubeconfig: '/k',
        logDir: '/w',
        uptimeMs: 65_000,
        units: { controller: true, audit: false },
        kubevirt: 'KubeVirt: REAL virt-controller',
      },
      snap(),
      ['▶ one', '✓ two'],
    );
    const text = lines.join('\n');
    expect(text).toContain('up 1:05');
    expect(text).toContain('units: controller ●  audit ✗\nKubeVirt: REAL virt-controller');
    expect(text).toContain('node-1 ● (1 VM)  node-2 ○');
    expect(text).toMatch(/demo +vm +Running +node-1 +10\.66\.0\.1 +Running !AgentReady ClassReady$/m);
    expect(text).toMatch(/demo +mig +Migrate +vm +InProgress +Syncing/);
    expect(text).toMatch(/image +demo +img +Provisioning +\[██████░{14}\] {2}31\.0% +Provisioning$/m);
    expect(text).toMatch(/disk +demo +root +Pending +- +ImageNotReady$/m);
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

  it('prints an image progress and its end as lines in plain mode', () => {
    const before = snap();
    const image = before.storage[0];
    if (image === undefined) throw new Error('fixture');
    const later = snap({ storage: [{ ...image, progress: '75.5%' }, ...before.storage.slice(1)] });
    expect(changes(before, later)).toEqual(['image demo/img: Provisioning [███████████████░░░░░]  75.5% Provisioning']);
    const done = snap({ storage: [{ ...image, phase: 'Ready', progress: '100%', detail: 'qcow2 64Mi' }, ...before.storage.slice(1)] });
    expect(changes(later, done)).toEqual(['image demo/img: Ready [████████████████████] 100.0% qcow2 64Mi']);
  });

  it.each([
    ['0%', `[${'░'.repeat(20)}]   0.0%`],
    ['100%', `[${'█'.repeat(20)}] 100.0%`],
    ['250%', `[${'█'.repeat(20)}] 100.0%`],
    ['12.34%', `[${'██'}${'░'.repeat(18)}]  12.3%`],
  ])('draws the progress %s as a bar', (progress, bar) => {
    expect(progressBar(progress)).toBe(bar);
  });

  it.each(['', 'N/A', '-5%', '12', '1e3%', '%'])('shows a progress that is not a percentage (%s) as it is', (progress) => {
    expect(progressBar(progress)).toBe(progress);
  });

  it('redraws in place: home, each line cut to the width and cleared to its end', () => {
    expect(frame(['abcdef', 'xy'], 4, false)).toBe('\x1b[Habc…\x1b[K\nxy\x1b[K\n\x1b[J');
    expect(frame([], 4, true).startsWith('\x1b[2J')).toBe(true);
  });
});
