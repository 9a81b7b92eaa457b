import { afterEach, describe, expect, it, jest } from '@jest/globals';
import type { VirtualDisk } from '../../../../shared/api/resources/virtualdisk.js';
import type { ClusterVirtualImage, VirtualImage } from '../../../../shared/api/resources/virtualimage.js';
import { parseCron } from '../../../../shared/cron/index.js';
import { CronTimer, chooseSchedule } from './schedule.js';
import { conditionOfResult, garbageTags, importsInProgress, ownerOfRepository, wantedTags } from './state.js';

const meta = (name: string, uid: string, namespace?: string): { name: string; uid: string; namespace?: string } => ({
  name,
  uid,
  ...(namespace !== undefined ? { namespace } : {}),
});
const readyFalse = (reason: string): { conditions: { type: string; status: string; reason: string; message: string; lastTransitionTime: string }[] } => ({
  conditions: [{ type: 'Ready', status: 'False', reason, message: '', lastTransitionTime: '2026-12-07T00:00:00Z' }],
});

const cvi = (name: string, uid: string, status?: object): ClusterVirtualImage =>
  ({ kind: 'ClusterVirtualImage', metadata: meta(name, uid), spec: {}, status }) as unknown as ClusterVirtualImage;
const vi = (ns: string, name: string, uid: string, status?: object): VirtualImage =>
  ({ kind: 'VirtualImage', metadata: meta(name, uid, ns), spec: {}, status }) as unknown as VirtualImage;
const vd = (ns: string, name: string, uid: string, dataSource: object | undefined, status?: object): VirtualDisk =>
  ({ kind: 'VirtualDisk', metadata: meta(name, uid, ns), spec: { dataSource }, status }) as unknown as VirtualDisk;

describe('which DVCR tags are garbage', () => {
  const wanted = wantedTags({
    clusterImages: [cvi('ubuntu', 'u1')],
    images: [vi('ns', 'alpine', 'a1')],
    disks: [vd('ns', 'importing', 'd1', { type: 'HTTP' }, { phase: 'Provisioning' }), vd('ns', 'done', 'd2', { type: 'HTTP' }, { phase: 'Ready' })],
  });

  it.each([
    ['cvi/ubuntu', ['u1'], []],
    ['cvi/ubuntu', ['u0', 'u1'], ['u0']], // an earlier object of the same name
    ['cvi/deleted', ['x'], ['x']],
    ['vi/ns/alpine', ['a1'], []],
    ['vi/other/alpine', ['a1'], ['a1']], // same name, another namespace
    ['vd/ns/importing', ['d1'], []],
    ['vd/ns/done', ['d2'], ['d2']], // a Ready disk's DVCR copy, as the original
    ['library/debian', ['12'], []], // not ours
    ['vi/too/deep/path', ['t'], []],
  ])('%s with tags %j: garbage %j', (repo, tags, garbage) => {
    expect(garbageTags(repo, tags, wanted)).toEqual(garbage);
  });

  it('reads the owner from a repository path, and nothing from a foreign one', () => {
    expect(ownerOfRepository('cvi/a')).toEqual({ kind: 'cvi', key: 'a' });
    expect(ownerOfRepository('vd/ns/b')).toEqual({ kind: 'vd', key: 'ns/b' });
    expect(ownerOfRepository('cvi')).toBeUndefined();
    expect(ownerOfRepository('other/ns/b')).toBeUndefined();
  });
});

describe('imports the run waits for', () => {
  it('counts images and DVCR disks with Ready=False Provisioning, not other reasons or disks without DVCR', () => {
    expect(
      importsInProgress({
        clusterImages: [cvi('a', '1', readyFalse('Provisioning')), cvi('b', '2', readyFalse('ProvisioningPostponed'))],
        images: [vi('ns', 'c', '3', readyFalse('Provisioning')), vi('ns', 'd', '4', readyFalse('WaitForUserUpload'))],
        disks: [
          vd('ns', 'e', '5', { type: 'HTTP' }, readyFalse('Provisioning')),
          vd('ns', 'f', '6', { type: 'ObjectRef', objectRef: { kind: 'VirtualImage', name: 'c' } }, readyFalse('Provisioning')),
          vd('ns', 'g', '7', undefined, readyFalse('Provisioning')),
          vd('ns', 'h', '8', { type: 'ObjectRef', objectRef: { kind: 'VirtualDiskSnapshot', name: 's' } }, readyFalse('Provisioning')),
        ],
      }),
    ).toBe(4);
  });
});

describe('the result the cleaner reports', () => {
  it.each([
    ['{"result":"success","message":"Deleted 2"}', 'Completed', 'Deleted 2'],
    ['{"result":"fail","error":"registry down"}', 'Error', 'registry down'],
    ['not json', 'Error', 'the garbage collection result is unreadable: not json'],
    ['{"result":"maybe"}', 'Error', 'unreadable'],
    [undefined, 'Error', 'without a result'],
  ])('%j -> %s', (raw, reason, message) => {
    const got = conditionOfResult(raw);
    expect(got.reason).toBe(reason);
    expect(got.message).toContain(message);
  });
});

describe('the schedule', () => {
  it.each([
    ['', undefined, 'off', 'DVCR_GC_SCHEDULE'],
    ['30 3 * * *', undefined, 'on', 'DVCR_GC_SCHEDULE'],
    ['', { dvcr: { gc: {} } }, 'on', 'ModuleConfig'], // dvcr.gc set: its default schedule
    ['30 3 * * *', { dvcr: { gc: { schedule: '' } } }, 'off', 'ModuleConfig'],
    ['', { dvcr: { storage: {} } }, 'off', 'DVCR_GC_SCHEDULE'],
    ['', { dvcr: { gc: { schedule: '0 25 * * *' } } }, 'invalid', 'ModuleConfig'],
    ['', { dvcr: { gc: { schedule: 5 } } }, 'invalid', 'ModuleConfig'],
    ['every day', undefined, 'invalid', 'DVCR_GC_SCHEDULE'],
  ])('env %j with settings %j is %s from %s', (env, settings, kind, source) => {
    const choice = chooseSchedule(env, settings);
    expect(choice.kind).toBe(kind);
    expect(choice.source).toContain(source);
  });

  it('a malformed ModuleConfig schedule says which field and what is wrong', () => {
    const choice = chooseSchedule('', { dvcr: { gc: { schedule: '0 25 * * *' } } });
    expect(choice.kind === 'invalid' && choice.message).toMatch(/spec\.settings\.dvcr\.gc\.schedule: .*hour "25": .*expected range 0-23/);
  });

  describe('CronTimer', () => {
    afterEach(() => {
      jest.useRealTimers();
    });

    it('fires at every scheduled time and not after stop', () => {
      jest.useFakeTimers({ now: new Date('2026-12-07T01:58:30Z') });
      const fired: string[] = [];
      const timer = new CronTimer(() => fired.push(new Date().toISOString()));
      timer.start(parseCron('0 2 * * *'));
      jest.advanceTimersByTime(60_000);
      expect(fired).toEqual([]);
      jest.advanceTimersByTime(30_000);
      expect(fired).toEqual(['2026-12-07T02:00:00.000Z']);
      jest.advanceTimersByTime(24 * 3600_000);
      expect(fired).toEqual(['2026-12-07T02:00:00.000Z', '2026-12-08T02:00:00.000Z']);
      timer.stop();
      jest.advanceTimersByTime(48 * 3600_000);
      expect(fired).toHaveLength(2);
    });
  });
});
