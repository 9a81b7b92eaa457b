import { existsSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ControlPlaneState } from './control-plane.js';
import { runKubectl } from './kubectl.js';

/** The committed, generated CRDs of the product (shared/api writes them). */
export const CRD_DIR = fileURLToPath(new URL('../../knative/crds/', import.meta.url));

/** KubeVirt's CRDs, upstream's renamed (tests/env/kubevirt/generate-crds.ts writes them). */
export const KUBEVIRT_CRD_DIR = fileURLToPath(new URL('../../knative/kubevirt/crds/', import.meta.url));

/**
 * snapshot.storage.k8s.io/v1 (VolumeSnapshot, VolumeSnapshotContent, VolumeSnapshotClass): minimal CRDs
 * written for the tests, standing in for the CSI snapshotter's, so disk snapshots can be made here.
 */
export const SNAPSHOT_CRD_DIR = fileURLToPath(new URL('./snapshot-crds/', import.meta.url));

/** Deckhouse's own Module and ModuleConfig CRDs, for clusters without Deckhouse (knative/standalone). */
export const STANDALONE_DIR = fileURLToPath(new URL('../../knative/standalone/', import.meta.url));

/** Apply knative/standalone (Module and ModuleConfig CRDs) and wait until both are Established. */
export async function installDeckhouseCrds(state: ControlPlaneState, kubeconfigPath?: string): Promise<void> {
  const opts = kubeconfigPath === undefined ? {} : { kubeconfigPath };
  const apply = await runKubectl(state, ['apply', '--server-side', '--force-conflicts', '--field-manager=virt-testenv', '-k', STANDALONE_DIR], opts);
  if (apply.code !== 0) throw new Error(`installing ${STANDALONE_DIR} failed:\n${apply.stderr}`);
  const wait = await runKubectl(
    state,
    ['wait', '--for=condition=Established', '--timeout=60s', 'crd/moduleconfigs.deckhouse.io', 'crd/modules.deckhouse.io'],
    opts,
  );
  if (wait.code !== 0) throw new Error(`the Deckhouse CRDs did not become Established:\n${wait.stderr}`);
}

/** Apply every CRD under knative/crds, knative/kubevirt/crds and the snapshot.storage.k8s.io ones, and wait until all are Established. */
export async function installCrds(state: ControlPlaneState): Promise<void> {
  if (!existsSync(CRD_DIR) || !readdirSync(CRD_DIR).some((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')) return;
  const yamlIn = (dir: string): string[] =>
    readdirSync(dir)
      .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
      .map((f) => dir + f);
  const files = [...yamlIn(CRD_DIR), ...yamlIn(KUBEVIRT_CRD_DIR), ...yamlIn(SNAPSHOT_CRD_DIR)];
  const apply = await runKubectl(state, ['apply', '--server-side', '--field-manager=virt-testenv', ...files.flatMap((f) => ['-f', f])]);
  if (apply.code !== 0) throw new Error(`installing the CRDs from ${CRD_DIR} failed:\n${apply.stderr}`);
  const wait = await runKubectl(state, ['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
  if (wait.code !== 0) throw new Error(`CRDs did not become Established:\n${wait.stderr}`);
}
