/**
 * The units whose images the install runs, read from skaffold.yaml's `virtualization` artifacts (the
 * one list of images), with what starting one needs from its workload manifest: a daemon's pod user
 * (route-forge and dra run as root; their DaemonSets say so).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadAll } from 'js-yaml';
import { z } from 'zod';

export const REPO = fileURLToPath(new URL('../../../', import.meta.url));

export interface ImageUnit {
  /** `functions/admission`, `daemons/controller`, ... (the build arg UNIT). */
  readonly unit: string;
  readonly kind: 'function' | 'daemon';
  readonly image: string;
  readonly buildArgs: Readonly<Record<string, string>>;
  /** The user the workload's pod runs the container as; undefined: the image's own (nonroot). */
  readonly runAsUser?: number;
}

const Artifact = z.object({
  image: z.string(),
  docker: z.object({ dockerfile: z.literal('Dockerfile'), buildArgs: z.record(z.string(), z.string()) }),
});
const Config = z.object({
  metadata: z.object({ name: z.string() }),
  build: z.object({ artifacts: z.array(Artifact) }).optional(),
});

const PodUser = z.object({
  kind: z.string(),
  spec: z.object({
    template: z.object({
      spec: z.object({
        securityContext: z.object({ runAsUser: z.number().optional() }).optional(),
        containers: z.array(z.object({ image: z.string() })),
      }),
    }),
  }),
});

function yamlFilesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? yamlFilesUnder(join(dir, e.name)) : e.name.endsWith('.yaml') ? [join(dir, e.name)] : [],
  );
}

/** The pod user of the install's Deployment or DaemonSet that runs `image` (a daemon's own, or the pod it is a sidecar of). */
function podUser(unit: string, image: string): number | undefined {
  for (const file of yamlFilesUnder(join(REPO, 'knative'))) {
    for (const doc of loadAll(readFileSync(file, 'utf8'))) {
      const workload = PodUser.safeParse(doc);
      if (
        workload.success &&
        ['Deployment', 'DaemonSet'].includes(workload.data.kind) &&
        workload.data.spec.template.spec.containers.some((c) => c.image === image)
      ) {
        return workload.data.spec.template.spec.securityContext?.runAsUser;
      }
    }
  }
  throw new Error(`no Deployment or DaemonSet under knative/ runs ${image} (${unit})`);
}

/** Every artifact of skaffold.yaml's `virtualization` config; throws naming what does not fit. */
export function imageUnits(skaffoldYaml = readFileSync(join(REPO, 'skaffold.yaml'), 'utf8')): ImageUnit[] {
  const configs = loadAll(skaffoldYaml).map((doc) => Config.parse(doc));
  const artifacts = configs.find((c) => c.metadata.name === 'virtualization')?.build?.artifacts;
  if (artifacts === undefined || artifacts.length === 0) throw new Error('skaffold.yaml: no build artifacts in the virtualization config');
  return artifacts.map(({ image, docker: { buildArgs } }) => {
    const unit = buildArgs['UNIT'];
    const match = /^(functions|daemons)\/[a-z-]+$/.exec(unit ?? '');
    if (unit === undefined || match === null) throw new Error(`skaffold.yaml: ${image} has no build arg UNIT like functions/<name> or daemons/<name>`);
    const kind = match[1] === 'functions' ? 'function' : 'daemon';
    const runAsUser = kind === 'daemon' ? podUser(unit, image) : undefined;
    return { unit, kind, image, buildArgs, ...(runAsUser !== undefined ? { runAsUser } : {}) };
  });
}
