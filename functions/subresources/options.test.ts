import { describe, expect, it } from '@jest/globals';
import { OptionsError, plainUpstream, streamUpstreamPath } from './options.js';

const q = (text: string): URLSearchParams => new URLSearchParams(text);
const body = (b: Buffer): unknown => JSON.parse(b.toString('utf8'));
const VMI = '/apis/subresources.kubevirt.io/v1/namespaces/ns/virtualmachineinstances/vm';
const VM = '/apis/subresources.kubevirt.io/v1/namespaces/ns/virtualmachines/vm';

describe('plainUpstream', () => {
  it('passes freeze bodies on to the VMI path', () => {
    const up = plainUpstream('freeze', 'ns', 'vm', q(''), Buffer.from('{"unfreezeTimeout":"1m"}'));
    expect(up.path).toBe(`${VMI}/freeze`);
    expect(body(up.body)).toEqual({ unfreezeTimeout: '1m' });
  });

  it('builds a read-only PVC disk for a VirtualImage with a PVC, and a container disk for one with an image', () => {
    const pvc = plainUpstream('addvolume', 'ns', 'vm', q('name=vi&volumeKind=VirtualImage&pvcName=p'), Buffer.alloc(0));
    expect(body(pvc.body)).toMatchObject({ volumeSource: { persistentVolumeClaim: { claimName: 'p', readOnly: true, hotpluggable: true } } });
    const img = plainUpstream('addvolume', 'ns', 'vm', q('name=vi&volumeKind=VirtualImage&image=r/i'), Buffer.alloc(0));
    expect(body(img.body)).toMatchObject({ volumeSource: { containerDisk: { image: 'r/i', hotpluggable: true } } });
    expect(img.path).toBe(`${VM}/addvolume`);
  });

  it('leaves the serial out of a cdrom', () => {
    const up = plainUpstream('addvolume', 'ns', 'vm', q('name=c&volumeKind=ClusterVirtualImage&image=i&isCdrom=true&serial=s'), Buffer.alloc(0));
    expect(body(up.body)).toMatchObject({ disk: { name: 'c', cdrom: { bus: 'scsi' }, errorPolicy: 'report' } });
    expect((body(up.body) as { disk: object }).disk).not.toHaveProperty('serial');
  });

  it('escapes names in paths', () => {
    expect(plainUpstream('unfreeze', 'n s', 'v/m', q(''), Buffer.alloc(0)).path).toBe(
      '/apis/subresources.kubevirt.io/v1/namespaces/n%20s/virtualmachineinstances/v%2Fm/unfreeze',
    );
  });

  it.each([
    ['freeze', '', '[1]', 'request body must be a JSON object'],
    ['freeze', '', '{', 'request body is not JSON'],
    ['addvolume', 'volumeKind=VirtualDisk', '', 'addvolume: query name is required'],
    ['addvolume', 'name=x&volumeKind=VirtualImage&pvcName=p&image=i', '', 'exactly one of query pvcName and image'],
    ['addvolume', 'name=x&volumeKind=ClusterVirtualImage', '', 'needs query image'],
    ['addresourceclaim', 'name=x', '', 'resourceClaimTemplateName is required'],
    ['removevolume', 'name=x&dryRun=Some', '', 'query dryRun must be All, got "Some"'],
    ['explode', '', '', 'unknown subresource explode'],
  ])('%s?%s with body %j: 400 naming the problem', (sub, query, text, message) => {
    expect(() => plainUpstream(sub, 'ns', 'vm', q(query), Buffer.from(text))).toThrow(new OptionsError(message).message);
  });
});

describe('streamUpstreamPath', () => {
  it.each([
    ['console', '', `${VMI}/console`],
    ['vnc', '', `${VMI}/vnc`],
    ['portforward', 'port=22', `${VMI}/portforward/22`],
    ['portforward', 'port=53&protocol=udp', `${VMI}/portforward/53/udp`],
  ])('%s?%s goes to %s', (sub, query, path) => {
    expect(streamUpstreamPath(sub, 'ns', 'vm', q(query))).toBe(path);
  });

  it.each([['port=0'], ['port=65536'], ['port=2e1'], [''], ['port=22&protocol=sctp']])('refuses portforward?%s', (query) => {
    expect(() => streamUpstreamPath('portforward', 'ns', 'vm', q(query))).toThrow(OptionsError);
  });
});
