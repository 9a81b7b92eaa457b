import { z } from 'zod';
import { parseMicroTime } from './microtime.js';

/** zod schemas for the metadata every object carries; unknown fields are kept (see ResourceClient). */
export const ownerReferenceSchema = z.looseObject({
  apiVersion: z.string(),
  kind: z.string(),
  name: z.string(),
  uid: z.string(),
  controller: z.boolean().optional(),
  blockOwnerDeletion: z.boolean().optional(),
});

export const objectMetaSchema = z.looseObject({
  name: z.string().optional(),
  generateName: z.string().optional(),
  namespace: z.string().optional(),
  uid: z.string().optional(),
  resourceVersion: z.string().optional(),
  generation: z.number().int().optional(),
  labels: z.record(z.string(), z.string()).optional(),
  annotations: z.record(z.string(), z.string()).optional(),
  finalizers: z.array(z.string()).optional(),
  ownerReferences: z.array(ownerReferenceSchema).optional(),
  deletionTimestamp: z.string().optional(),
  creationTimestamp: z.string().optional(),
});

/** Any object: apiVersion, kind, metadata, and whatever else it has. */
export const kubeObjectSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: objectMetaSchema,
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
