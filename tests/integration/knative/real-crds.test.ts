/**
 * The install against Knative's own CRDs (from the Go modules of the pinned release, through
 * tests/env/knative-modules.sh), on a control plane of this test's own: the suite's shared one keeps
 * the minimal stand-ins of tests/integration/install/knative-crds, which the other install tests use.
 * No Knative webhook runs here: what Knative's CRD schemas accept and refuse, not its defaulting.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getTestEnv } from '../../env/index.js';
import { startControlPlane, type ControlPlane } from '../../env/control-plane.js';
import { runKubectl, type KubectlResult } from '../../env/kubectl.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const KNATIVE_DIR = join(REPO, 'knative');
/** Not Knative's: the Prometheus Operator's ServiceMonitor, which knative/monitoring needs too. */
const SERVICE_MONITOR_CRD = join(REPO, 'tests/integration/install/knative-crds/monitoring-servicemonitors.yaml');

let cp: ControlPlane;
let workDir: string;
let knativeDir: string;

const kubectl = (args: string[], stdin?: string): Promise<KubectlResult> =>
  runKubectl(cp.state, args, stdin === undefined ? {} : { stdin });

async function ok(args: string[]): Promise<string> {
  const r = await kubectl(args);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed:\n${r.stderr}`);
  return r.stdout;
}

const yamlFiles = (dir: string): string[] =>
  readdirSync(dir)
    .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
    .map((f) => join(dir, f));

beforeAll(async () => {
  knativeDir = execFileSync('bash', [join(REPO, 'tests/env/knative-modules.sh')], { encoding: 'utf8' }).trim();
  const base = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
  workDir = mkdtempSync(join(base, 'virt-knative-crds-'));
  cp = await startControlPlane(getTestEnv().binDir, workDir);
  const crds = [...yamlFiles(join(knativeDir, 'serving')), ...yamlFiles(join(knativeDir, 'eventing')), SERVICE_MONITOR_CRD];
  await ok(['apply', '--server-side', '--field-manager=install-test', ...crds.flatMap((f) => ['-f', f])]);
  await ok(['apply', '--server-side', '--field-manager=install-test', '-k', join(KNATIVE_DIR, 'crds')]);
  await ok(['apply', '--server-side', '--field-manager=install-test', '-f', join(KNATIVE_DIR, 'namespace.yaml')]);
  await ok(['wait', '--for=condition=Established', '--timeout=120s', 'crd', '--all']);
}, 600_000);

afterAll(async () => {
  await cp?.stop();
  if (workDir !== undefined) rmSync(workDir, { recursive: true, force: true });
}, 60_000);

describe("the install against Knative's own CRDs", () => {
  it('passes server-side dry-run of `kubectl apply -k knative/` with every object accepted', async () => {
    const rendered = await ok(['kustomize', KNATIVE_DIR]);
    const count = rendered.split(/^---$/m).filter((doc) => /^kind:/m.test(doc)).length;
    const r = await kubectl(['apply', '--server-side', '--dry-run=server', '--field-manager=virtualization-install', '-k', KNATIVE_DIR]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split('\n').filter((l) => l.endsWith('serverside-applied (server dry run)'))).toHaveLength(count);
  }, 120_000);

  it("refuses a Service whose container port is not a number, by Knative's schema, naming the field", async () => {
    const broken = [
      'apiVersion: serving.knative.dev/v1',
      'kind: Service',
      'metadata: {name: broken, namespace: default}',
      'spec:',
      '  template:',
      '    spec:',
      '      containers:',
      '        - image: dev.local/virtualization-admission',
      '          ports: [{containerPort: http}]',
      '',
    ].join('\n');
    const r = await kubectl(['apply', '--server-side', '--dry-run=server', '--field-manager=install-test', '-f', '-'], broken);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('serving.knative.dev/v1, Kind=Service');
    expect(r.stderr).toMatch(/\.spec\.template\.spec\.containers\[0\]\.ports\[.*\]\.containerPort: expected numeric/);
  });

  it("pins one Knative release: skaffold.yaml installs the version whose CRDs are tested here", () => {
    const version = readFileSync(join(knativeDir, 'VERSION'), 'utf8').trim();
    const releases = [...readFileSync(join(REPO, 'skaffold.yaml'), 'utf8').matchAll(/\/knative\/[a-z-]+\/releases\/download\/knative-v([0-9.]+)\//g)];
    expect(releases.length).toBeGreaterThan(0);
    expect(new Set(releases.map((m) => m[1]))).toEqual(new Set([version]));
  });
});
