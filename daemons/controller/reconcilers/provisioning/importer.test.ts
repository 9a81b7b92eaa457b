import { describe, expect, it } from '@jest/globals';
import type { HelperPod } from './kube.js';
import { helperPod, helperPodName, outcomeOf, progressFromMetrics, shortName, sizeForImage, type HelperSettings } from './importer.js';
import { failureReason } from './image-reconciler.js';

const settings: HelperSettings = { image: 'importer:1', dvcrAddress: '127.0.0.1:5000', dvcrInsecure: true, uploadWaitTimeout: '600s' };
const owner = { apiVersion: 'virtualization.deckhouse.io/v1alpha2', kind: 'VirtualImage', metadata: { name: 'ubuntu', namespace: 'ns', uid: 'u-1' } };

function envOf(pod: HelperPod): Record<string, string> {
  const spec = pod.spec as { containers: { env: { name: string; value: string }[] }[] };
  return Object.fromEntries((spec.containers[0]?.env ?? []).map((e) => [e.name, e.value]));
}

function finished(phase: string, message: string | undefined, reason?: string): HelperPod {
  return {
    metadata: { name: 'p' },
    status: {
      phase,
      containerStatuses: [
        {
          name: 'importer',
          state: { terminated: { exitCode: phase === 'Succeeded' ? 0 : 1, ...(message !== undefined ? { message } : {}), ...(reason ? { reason } : {}) } },
        },
      ],
    },
  };
}

describe('importer Pod', () => {
  it('an HTTP source into DVCR: the contract env, owner, no restarts', () => {
    const pod = helperPod(settings, {
      step: 'import',
      owner,
      namespace: 'ns',
      source: { type: 'http', url: 'http://files/disk.qcow2', checksums: { sha256: 'ab'.repeat(32) } },
      destination: { type: 'dvcr', repo: 'vi/ns/ubuntu:u-1' },
    });
    expect(pod.metadata.name).toBe('d8v-import-vi-ubuntu');
    expect(envOf(pod)).toMatchObject({
      IMPORTER_SOURCE: 'http',
      IMPORTER_ENDPOINT: 'http://files/disk.qcow2',
      IMPORTER_CHECKSUMS: JSON.stringify({ sha256: 'ab'.repeat(32) }),
      IMPORTER_DESTINATION_ENDPOINT: 'http://127.0.0.1:5000/vi/ns/ubuntu:u-1',
    });
    expect(pod.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'VirtualImage', uid: 'u-1', controller: true });
    expect((pod.spec as { restartPolicy: string }).restartPolicy).toBe('Never');
  });

  it('DVCR into a PVC: the claim mounted, a raw file destination', () => {
    const pod = helperPod(settings, {
      step: 'pvc',
      owner,
      namespace: 'ns',
      source: { type: 'registry', image: 'http://r/vi/x:1' },
      destination: { type: 'pvc', claimName: 'vi-ubuntu-u-1' },
    });
    expect(envOf(pod)).toMatchObject({ IMPORTER_SOURCE: 'registry', IMPORTER_DESTINATION_PATH: '/data/disk.img', IMPORTER_DESTINATION_FORMAT: 'raw' });
    expect(JSON.stringify(pod.spec)).toContain('"claimName":"vi-ubuntu-u-1"');
  });

  it('a Block claim is a device: volumeDevices at the device path, no mount, the device as destination', () => {
    const pod = helperPod(settings, {
      step: 'pvc',
      owner,
      namespace: 'ns',
      source: { type: 'registry', image: 'http://r/vi/x:1' },
      destination: { type: 'pvc', claimName: 'vd-a', volumeMode: 'Block' },
    });
    const container = (pod.spec as { containers: { volumeMounts: { name: string }[]; volumeDevices?: unknown[] }[] }).containers[0];
    expect(container?.volumeDevices).toEqual([{ name: 'data', devicePath: '/dev/pvc-importer-block-volume' }]);
    expect(container?.volumeMounts.map((m) => m.name)).not.toContain('data');
    expect(envOf(pod)).toMatchObject({ IMPORTER_DESTINATION_DEVICE: '/dev/pvc-importer-block-volume', IMPORTER_DESTINATION_FORMAT: 'raw' });
    expect(envOf(pod)['IMPORTER_DESTINATION_PATH']).toBeUndefined();
  });

  it('a Block source claim is read from its device; a Filesystem one from its mounted file', () => {
    const spec = (volumeMode: string): { env: Record<string, string>; devices: unknown; mounts: unknown } => {
      const pod = helperPod(settings, {
        step: 'pvc',
        owner,
        namespace: 'ns',
        source: { type: 'pvc', claimName: 'src', volumeMode },
        destination: { type: 'pvc', claimName: 'dst', volumeMode: 'Filesystem' },
      });
      const c = (pod.spec as { containers: { volumeMounts: unknown; volumeDevices?: unknown }[] }).containers[0];
      return { env: envOf(pod), devices: c?.volumeDevices, mounts: c?.volumeMounts };
    };
    const block = spec('Block');
    expect(block.env['IMPORTER_ENDPOINT']).toBe('/dev/source-block-volume');
    expect(block.devices).toEqual([{ name: 'source', devicePath: '/dev/source-block-volume' }]);
    const fs = spec('Filesystem');
    expect(fs.env['IMPORTER_ENDPOINT']).toBe('/source/disk.img');
    expect(fs.devices).toBeUndefined();
    expect(fs.mounts).toEqual(expect.arrayContaining([{ name: 'source', mountPath: '/source', readOnly: true }]));
  });

  it('an upload: listens on the upload port and passes the wait timeout', () => {
    const pod = helperPod(settings, { step: 'upload', owner, namespace: 'ns', source: { type: 'upload' }, destination: { type: 'dvcr', repo: 'r:1' } });
    expect(envOf(pod)).toMatchObject({ IMPORTER_SOURCE: 'upload', UPLOADER_PORT: '8444', UPLOADER_WAIT_TIMEOUT: '600s' });
  });

  it('long names are shortened with a hash and stay valid', () => {
    const name = helperPodName('import', { ...owner, metadata: { ...owner.metadata, name: 'x'.repeat(80) } });
    expect(name.length).toBeLessThanOrEqual(63);
    expect(name).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
    expect(shortName(['a', 'b'])).toBe('a-b');
  });
});

describe('importer outcome', () => {
  it.each([
    ['running', { metadata: { name: 'p' }, status: { phase: 'Running' } }, { state: 'running' }],
    [
      'success',
      finished('Succeeded', JSON.stringify({ phase: 'Succeeded', format: 'qcow2', virtualSize: 67108864, storedSize: 1000 })),
      { state: 'succeeded', result: { format: 'qcow2', virtualSize: 67108864 } },
    ],
    [
      'importer failure',
      finished('Failed', JSON.stringify({ phase: 'Failed', reason: 'ChecksumMismatch', message: 'sha256 differs' })),
      { state: 'failed', reason: 'ChecksumMismatch', message: 'sha256 differs' },
    ],
    ['malformed message', finished('Failed', '{"phase":'), { state: 'failed', reason: 'InternalError' }],
    [
      'success without a result',
      finished('Succeeded', undefined),
      { state: 'failed', reason: 'InternalError', message: 'the importer ended without a readable result' },
    ],
    [
      'result of the wrong type',
      finished('Succeeded', JSON.stringify({ phase: 'Succeeded', format: 'raw', virtualSize: '10' })),
      { state: 'failed', reason: 'InternalError' },
    ],
    ['killed', finished('Failed', undefined, 'OOMKilled'), { state: 'failed', reason: 'InternalError', message: 'the importer failed (OOMKilled)' }],
  ] as const)('%s', (_name, pod, expected) => {
    expect(outcomeOf(pod as HelperPod)).toMatchObject(expected);
  });
});

describe('progress, sizes, reasons', () => {
  it('reads the progress ratio from metrics text and ignores garbage', () => {
    expect(progressFromMetrics('# HELP x\nimporter_progress_ratio 0.421\nimporter_bytes 5\n')).toBe('42.1%');
    expect(progressFromMetrics('importer_progress_ratio NaN')).toBeUndefined();
    expect(progressFromMetrics('nothing here')).toBeUndefined();
    expect(progressFromMetrics('importer_progress_ratio 7')).toBe('100.0%');
  });

  it('rounds a PVC up to whole MiB', () => {
    expect(sizeForImage(1)).toBe(1024 * 1024);
    expect(sizeForImage(64 * 1024 * 1024)).toBe(64 * 1024 * 1024);
  });

  it('maps importer reasons to Ready reasons', () => {
    expect(failureReason('UploadTimeout', false)).toBe('WaitForUserUploadTimeout');
    expect(failureReason('SourceNotFound', true)).toBe('ImagePullFailed');
    expect(failureReason('SourceNotFound', false)).toBe('ProvisioningFailed');
    expect(failureReason('ChecksumMismatch', true)).toBe('ProvisioningFailed');
  });
});
