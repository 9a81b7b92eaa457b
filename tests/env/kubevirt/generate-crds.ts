/**
 * Rewrites knative/kubevirt/crds/ from upstream KubeVirt's CRDs (building the dumper if needed):
 * `npx tsx tests/env/kubevirt/generate-crds.ts`. Files no longer rendered are removed.
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureKubeVirtBinaries } from '../binaries.js';
import { KUBEVIRT_CRD_DIR, renderKubeVirtCrdFiles } from './crds.js';

const files = renderKubeVirtCrdFiles(await ensureKubeVirtBinaries());
mkdirSync(KUBEVIRT_CRD_DIR, { recursive: true });
for (const existing of readdirSync(KUBEVIRT_CRD_DIR)) if (!files.has(existing)) rmSync(join(KUBEVIRT_CRD_DIR, existing));
for (const [name, text] of files) writeFileSync(join(KUBEVIRT_CRD_DIR, name), text);
process.stdout.write(`${files.size} files in ${KUBEVIRT_CRD_DIR}\n`);
