import { z } from 'zod';
import { ObjectMetaSchema } from '../api/k8s/core.js';
import { parseMicroTime } from './microtime.js';

/**
 * Schemas this library needs beyond shared/api (which owns ObjectMeta and OwnerReference).
 * Any object: apiVersion, kind, metadata, and whatever else it has.
 */
export const kubeObjectSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: ObjectMetaSchema,
});

/** A metav1.MicroTime string (RFC 3339, parsed by parseMicroTime). */
export const microTimeSchema = z.string().refine(
  (text) => {
    try {
      parseMicroTime(text);
      return true;
    } catch {
      return false;
    }
  },
  { message: 'expected an RFC 3339 time such as 2026-12-02T14:09:02.123456Z' },
);

/** A reference to the object an event is about (core ObjectReference). */
export const objectReferenceSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  namespace: z.string().optional(),
  name: z.string().optional(),
  uid: z.string().optional(),
  resourceVersion: z.string().optional(),
  fieldPath: z.string().optional(),
});
