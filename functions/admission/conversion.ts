/**
 * The CRD conversion webhook (ConversionReview v1) for VirtualMachineClass v1alpha2 <-> v1alpha3, on
 * the admission function at `/convert`: the apiserver posts the objects and the version it wants, the
 * answer carries them converted (shared/api/resources/virtualmachineclass-conversion.ts). A malformed
 * envelope is a 400; an object that cannot be written in the wanted version is a `Failure` result
 * naming the object and the field, as the apiserver then reports it to the client.
 */
import { z } from 'zod';
import { zodProblems } from '../../shared/config/index.js';
import { GROUP } from '../../shared/api/resources/common.js';
import { CLASS_VERSIONS, convertVirtualMachineClass, type ClassVersion } from '../../shared/api/resources/virtualmachineclass-conversion.js';

const ConversionReviewSchema = z.object({
  apiVersion: z.literal('apiextensions.k8s.io/v1'),
  kind: z.literal('ConversionReview'),
  request: z.object({
    uid: z.string().min(1),
    desiredAPIVersion: z.string().min(1),
    objects: z.array(z.record(z.string(), z.unknown())),
  }),
});

export interface ConversionResponse {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'ConversionReview';
  response: {
    uid: string;
    convertedObjects: Record<string, unknown>[];
    result: { status: 'Success' } | { status: 'Failure'; message: string };
  };
}

export type ConversionAnswer = { ok: true; review: ConversionResponse; converted: number } | { ok: false; message: string };

const CLASS_API_VERSIONS = new Map(CLASS_VERSIONS.map((v) => [`${GROUP}/${v}`, v]));

/** Decode a ConversionReview, convert every object, encode the answer; never throws. */
export function answerConversion(body: unknown): ConversionAnswer {
  const parsed = ConversionReviewSchema.safeParse(body);
  if (!parsed.success) {
    const why = zodProblems(parsed.error)
      .map((p) => `${p.path || '<root>'}: ${p.message}`)
      .join('; ');
    return { ok: false, message: `invalid ConversionReview: ${why}` };
  }
  const { uid, desiredAPIVersion, objects } = parsed.data.request;
  const answer = (result: ConversionResponse['response']['result'], convertedObjects: Record<string, unknown>[] = []): ConversionAnswer => ({
    ok: true,
    converted: convertedObjects.length,
    review: { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', response: { uid, convertedObjects, result } },
  });
  const to: ClassVersion | undefined = CLASS_API_VERSIONS.get(desiredAPIVersion);
  if (to === undefined) return answer({ status: 'Failure', message: `cannot convert to ${desiredAPIVersion}` });
  const converted: Record<string, unknown>[] = [];
  for (const obj of objects) {
    const meta = obj['metadata'] as { name?: unknown } | undefined;
    const name = typeof meta?.name === 'string' ? meta.name : '';
    if (obj['kind'] !== 'VirtualMachineClass' || !CLASS_API_VERSIONS.has(String(obj['apiVersion']))) {
      return answer({ status: 'Failure', message: `cannot convert ${String(obj['apiVersion'])} ${String(obj['kind'])} ${name}` });
    }
    const result = convertVirtualMachineClass(obj, to);
    if (!result.ok) {
      const why = result.problems.map((p) => `${p.path}: ${p.message}`).join('; ');
      return answer({ status: 'Failure', message: `VirtualMachineClass ${name} cannot be written as ${desiredAPIVersion}: ${why}` });
    }
    converted.push(result.value);
  }
  return answer({ status: 'Success' }, converted);
}
