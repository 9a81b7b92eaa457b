/**
 * The admission function over real HTTP (in-process, port 0, fake lookups): every path answers
 * AdmissionReviews, broken input gets a readable 4xx, and the server keeps serving.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { serve, type ServerHandle } from '../../shared/runtime/index.js';
import { send } from '../../shared/runtime/testing/index.js';
import { createAdmission } from './index.js';
import { FakeLookups, emptyWorld } from './testing/fake-lookups.js';
import { request, typed, vm } from './testing/objects.js';
import { WEBHOOKS } from './webhooks.js';

const VM_PATH = '/validate-virtualization-deckhouse-io-v1alpha2-virtualmachine';
const MUTATE_PATH = '/mutate-virtualization-deckhouse-io-v1alpha2-virtualmachine';

let host: ServerHandle;

beforeAll(async () => {
  const world = emptyWorld();
  world.classes.push(typed.vmClass());
  const fn = createAdmission(() => ({ lookups: new FakeLookups(world), close: () => undefined }));
  host = await serve(fn, { env: { PORT: '0', HOST: '127.0.0.1' } });
});

afterAll(async () => {
  await host.close();
});

const review = (object: unknown, extra: Record<string, unknown> = {}): string =>
  JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { ...request(object), ...extra } });

const post = (path: string, body: string | Buffer) => send(`${host.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

async function stillServing(): Promise<void> {
  const res = await post(VM_PATH, review(vm()));
  expect(res.status).toBe(200);
  expect(res.json()).toMatchObject({ response: { allowed: true } });
}

describe('admission over HTTP', () => {
  it('serves every original webhook path', async () => {
    for (const w of WEBHOOKS) {
      const res = await post(w.path, review({}));
      expect([w.path, res.status]).toEqual([w.path, 200]);
    }
  });

  it('admits a good VirtualMachine with the request uid', async () => {
    const res = await post(VM_PATH, review(vm()));
    expect(res.json()).toEqual({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: 'b3c8f0d2-1111-4a4a-9c9c-000000000001', allowed: true },
    });
  });

  it('denies a bad VirtualMachine listing every violation with its path', async () => {
    const bad = vm((o) => void ((o.metadata.name = 'x'.repeat(64)), o.spec.blockDeviceRefs.push({ kind: 'VirtualDisk', name: 'root' })));
    const res = await post(VM_PATH, review(bad));
    const body = res.json() as { response: { allowed: boolean; status: { message: string } } };
    expect(body.response.allowed).toBe(false);
    expect(body.response.status.message).toBe(
      'metadata.name: must be no more than 63 characters (it has 64); spec.blockDeviceRefs[1]: VirtualDisk/root is already listed at spec.blockDeviceRefs[0]',
    );
  });

  it('returns the defaults as a JSON Patch', async () => {
    const res = await post(MUTATE_PATH, review(vm((o) => void ((o.spec.virtualMachineClassName = ''), delete o.spec.cpu.coreFraction))));
    const body = res.json() as { response: { patchType: string; patch: string } };
    expect(body.response.patchType).toBe('JSONPatch');
    expect(JSON.parse(Buffer.from(body.response.patch, 'base64').toString())).toEqual([
      { op: 'add', path: '/metadata/finalizers', value: ['virtualization.deckhouse.io/vm-cleanup'] },
      { op: 'replace', path: '/spec/virtualMachineClassName', value: 'generic' },
      { op: 'add', path: '/spec/cpu/coreFraction', value: '100%' },
    ]);
  });

  it.each([
    ['a body that is not JSON', '{"apiVersion": ', /JSON/],
    ['an empty body', '', /empty|JSON/],
    [
      'a wrong apiVersion',
      JSON.stringify({ apiVersion: 'admission.k8s.io/v1beta1', kind: 'AdmissionReview', request: request(vm()) }),
      /apiVersion: must be admission.k8s.io\/v1/,
    ],
    ['a wrong kind', JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'Review', request: request(vm()) }), /kind: must be AdmissionReview/],
    ['a missing request.uid', review(vm(), { uid: undefined }), /request.uid/],
  ])('answers 400 with a readable message for %s, and keeps serving', async (_what, body, message) => {
    const res = await post(VM_PATH, body);
    expect(res.status).toBe(400);
    expect((res.json() as { error: { message: string } }).error.message).toMatch(message);
    await stillServing();
  });

  it('answers 413 to a 10 MB body, and keeps serving', async () => {
    const res = await post(VM_PATH, Buffer.alloc(10 * 1024 * 1024, 0x20));
    expect(res.status).toBe(413);
    expect((res.json() as { error: { message: string } }).error.message).toMatch(/larger than the limit/);
    await stillServing();
  });

  it('denies an object of the wrong kind for the path with a readable message', async () => {
    const disk = { apiVersion: 'virtualization.deckhouse.io/v1alpha2', kind: 'VirtualDisk', metadata: { name: 'd', namespace: 'ns1' }, spec: {} };
    const res = await post(VM_PATH, review(disk));
    const body = res.json() as { response: { allowed: boolean; status: { message: string } } };
    expect(res.status).toBe(200);
    expect(body.response.allowed).toBe(false);
    expect(body.response.status.message).toMatch(
      /^kind: this webhook admits virtualization.deckhouse.io\/\* VirtualMachine, not virtualization.deckhouse.io\/v1alpha2 VirtualDisk/,
    );
  });

  it('counts reviews by webhook and result', async () => {
    await post(VM_PATH, review(vm((o) => void (o.metadata.name = 'x'.repeat(64)))));
    await post(VM_PATH, '[]');
    expect(await host.metrics.expose()).toMatch(/admission_reviews_total\{webhook="vm",result="denied"\} [1-9]/);
    expect(await host.metrics.expose()).toMatch(/admission_reviews_total\{webhook="vm",result="invalid"\} [1-9]/);
  });
});
