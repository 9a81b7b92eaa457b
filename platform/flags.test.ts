import { describe, expect, it } from '@jest/globals';
import { FlagError, HELP, parseFlags } from './flags.js';

describe('npm start flags', () => {
  it('defaults to a local platform whose demo is decided later, two nodes and 10.66.0.0/16', () => {
    expect(parseFlags([])).toEqual({
      help: false,
      demo: undefined,
      exitAfterDemo: false,
      kubeconfig: undefined,
      nodes: 2,
      vmCidr: '10.66.0.0/16',
      workDir: undefined,
      keep: false,
      plain: undefined,
      guests: 'auto',
      dvcrGcSchedule: '0 2 * * *',
    });
  });

  it('reads every flag, values given apart or with =', () => {
    const f = parseFlags(['--demo', '--exit-after-demo', '--kubeconfig', '/k', '--nodes=3', '--vm-cidr', '10.1.0.0/24', '--work-dir=/w', '--keep', '--plain']);
    expect(f).toMatchObject({ demo: true, exitAfterDemo: true, kubeconfig: '/k', nodes: 3, vmCidr: '10.1.0.0/24', workDir: '/w', keep: true, plain: true });
    expect(parseFlags(['--no-demo']).demo).toBe(false);
    expect(parseFlags(['-h']).help).toBe(true);
    expect(parseFlags(['--guests', 'simulated']).guests).toBe('simulated');
    expect(parseFlags(['--guests=qemu']).guests).toBe('qemu');
    expect(parseFlags(['--dvcr-gc-schedule', '*/5 * * * *']).dvcrGcSchedule).toBe('*/5 * * * *');
    expect(parseFlags(['--dvcr-gc-schedule=@hourly']).dvcrGcSchedule).toBe('@hourly');
    expect(parseFlags(['--dvcr-gc-schedule', 'off']).dvcrGcSchedule).toBeUndefined();
  });

  it('refuses a DVCR garbage collection schedule that is not a five-field cron schedule, naming the field at fault', () => {
    expect(() => parseFlags(['--dvcr-gc-schedule', '0 25 * * *'])).toThrow(
      /--dvcr-gc-schedule must be a five-field cron schedule \(or off\), got "0 25 \* \* \*": hour "25"/,
    );
    expect(() => parseFlags(['--dvcr-gc-schedule', 'nightly'])).toThrow(/--dvcr-gc-schedule .*"nightly": expected 5 fields/);
  });

  it('reports every problem at once', () => {
    let err: unknown;
    try {
      parseFlags(['--nodes', 'many', '--vm-cidr', '10.1.0.1/16', '--kubeconfig', '--frob', '--guests', 'kvm', '--exit-after-demo', '--no-demo']);
    } catch (e: unknown) {
      err = e;
    }
    expect(err).toBeInstanceOf(FlagError);
    expect((err as FlagError).problems).toEqual([
      '--nodes must be a whole number from 1 to 50, got many',
      '--vm-cidr must be an IPv4 subnet aligned to its mask, such as 10.66.0.0/16, got 10.1.0.1/16',
      '--kubeconfig needs a value',
      'unknown flag --frob',
      '--guests must be auto, qemu or simulated, got kvm',
      '--exit-after-demo with --no-demo: there is no demo to wait for',
    ]);
  });

  it('refuses a demo with one node (the migration needs two)', () => {
    expect(() => parseFlags(['--demo', '--nodes', '1'])).toThrow(/at least 2/);
  });

  it('documents in --help every flag it accepts', () => {
    for (const flag of [
      '--demo',
      '--no-demo',
      '--exit-after-demo',
      '--kubeconfig',
      '--nodes',
      '--vm-cidr',
      '--work-dir',
      '--keep',
      '--plain',
      '--dvcr-gc-schedule',
      '--help',
    ]) {
      expect(HELP).toContain(`  ${flag}`);
    }
  });
});
