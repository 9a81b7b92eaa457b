import { describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { kubeletProtos } from './protos.js';

const PROTO_DIR = fileURLToPath(new URL('../../../proto/', import.meta.url));

async function files(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) if (e.isFile()) out.push(relative(dir, join(e.parentPath, e.name)));
  return out.sort();
}

describe('kubelet protos', () => {
  it('proto/gen is what proto/generate.sh generates from the .proto files (no drift)', async () => {
    const out = await mkdtemp(join(tmpdir(), 'proto-gen-'));
    try {
      await promisify(execFile)('bash', [join(PROTO_DIR, 'generate.sh'), out]);
      const committed = join(PROTO_DIR, 'gen');
      expect(await files(out)).toEqual(await files(committed));
      for (const f of await files(out)) {
        expect({ file: f, text: await readFile(join(out, f), 'utf8') }).toEqual({ file: f, text: await readFile(join(committed, f), 'utf8') });
      }
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  });

  it('serves the method paths kubelet calls', () => {
    const p = kubeletProtos();
    const paths = (svc: { service: Record<string, { path: string }> }): string[] =>
      Object.values(svc.service)
        .map((m) => m.path)
        .sort();
    expect(paths(p.k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin)).toEqual([
      '/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources',
      '/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodeUnprepareResources',
    ]);
    expect(paths(p.k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin)).toEqual([
      '/k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin/NodePrepareResources',
      '/k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin/NodeUnprepareResources',
    ]);
    expect(paths(p.pluginregistration.Registration)).toEqual([
      '/pluginregistration.Registration/GetInfo',
      '/pluginregistration.Registration/NotifyRegistrationStatus',
    ]);
  });

  it('encodes a prepared device with the field numbers of the kubelet API', () => {
    const method = kubeletProtos().k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin.service.NodePrepareResources;
    const bytes = method.responseSerialize({
      claims: { u1: { devices: [{ request_names: ['r'], pool_name: 'p', device_name: 'd', cdi_device_ids: ['a/b=c'] }] } },
    });
    // map entry (field 1) { key "u1", value (field 2) { devices (1) { 1:"r" 2:"p" 3:"d" 4:"a/b=c" } } }
    expect(bytes.toString('hex')).toBe('0a180a02753112120a100a0172120170' + '1a0164' + '2205612f623d63');
  });
});
