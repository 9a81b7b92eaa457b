/** The objects the certificate manager reads and writes: Secrets, webhook configurations, APIServices. */
import { z } from 'zod';
import { ObjectMetaSchema } from '../../../shared/api/k8s/core.js';
import type { KubeClient, KubeObject, ResourceClient, ResourceDescriptor } from '../../../shared/kube/index.js';
import { SecretSchema, type Secret } from '../kube/resources.js';

/** Selects the objects whose CA bundle we fill (only ours: the install labels them). */
export const INJECT_LABEL = 'virtualization.deckhouse.io/inject-ca';
/** On an injection target: the Secret (in the manager's namespace) whose `ca.crt` goes into its caBundle. */
export const INJECT_FROM_ANNOTATION = 'virtualization.deckhouse.io/inject-ca-from';
/** On a managed Secret: any value forces a new key and certificate on the next pass. */
export const ROTATE_ANNOTATION = 'virtualization.deckhouse.io/rotate';
/** On a Secret we issued: which part it plays (`ca` or `serving`). */
export const CERTIFICATE_LABEL = 'virtualization.deckhouse.io/certificate';
/** On a CRD: `<service><path>` of its conversion webhook in the manager's namespace (shared/api k8s/crd.ts). */
export const CONVERSION_WEBHOOK_ANNOTATION = 'virtualization.deckhouse.io/conversion-webhook';

const clientConfigSchema = z.looseObject({ caBundle: z.string().optional() });
const webhookSchema = z.looseObject({ name: z.string(), clientConfig: clientConfigSchema });

export const WebhookConfigurationSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: ObjectMetaSchema,
  webhooks: z.array(webhookSchema).optional(),
});
export type WebhookConfiguration = z.infer<typeof WebhookConfigurationSchema>;

export const ApiServiceSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: ObjectMetaSchema,
  spec: z.looseObject({ caBundle: z.string().optional() }).optional(),
});
export type ApiService = z.infer<typeof ApiServiceSchema>;

/** A CRD as far as injection reads it: its conversion webhook's CA bundle. */
export const CrdSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: ObjectMetaSchema,
  spec: z
    .looseObject({
      conversion: z
        .looseObject({ strategy: z.string().optional(), webhook: z.looseObject({ clientConfig: clientConfigSchema.optional() }).optional() })
        .optional(),
    })
    .optional(),
});
export type Crd = z.infer<typeof CrdSchema>;

const admission = (plural: string, kind: string): ResourceDescriptor => ({
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  plural,
  kind,
  namespaced: false,
});

export const validatingWebhooks = admission('validatingwebhookconfigurations', 'ValidatingWebhookConfiguration');
export const mutatingWebhooks = admission('mutatingwebhookconfigurations', 'MutatingWebhookConfiguration');
export const apiServices: ResourceDescriptor = {
  group: 'apiregistration.k8s.io',
  version: 'v1',
  plural: 'apiservices',
  kind: 'APIService',
  namespaced: false,
};
export const crds: ResourceDescriptor = {
  group: 'apiextensions.k8s.io',
  version: 'v1',
  plural: 'customresourcedefinitions',
  kind: 'CustomResourceDefinition',
  namespaced: false,
};
export const services: ResourceDescriptor = { group: '', version: 'v1', plural: 'services', kind: 'Service', namespaced: true };
export const secrets: ResourceDescriptor = { group: '', version: 'v1', plural: 'secrets', kind: 'Secret', namespaced: true };

export interface CertClients {
  secrets: ResourceClient<Secret>;
  validating: ResourceClient<WebhookConfiguration>;
  mutating: ResourceClient<WebhookConfiguration>;
  apiServices: ResourceClient<ApiService>;
  crds: ResourceClient<Crd>;
  services: ResourceClient<KubeObject>;
}

export function makeCertClients(kube: KubeClient, fieldManager: string): CertClients {
  return {
    secrets: kube.resource(secrets, SecretSchema, fieldManager),
    validating: kube.resource(validatingWebhooks, WebhookConfigurationSchema, fieldManager),
    mutating: kube.resource(mutatingWebhooks, WebhookConfigurationSchema, fieldManager),
    apiServices: kube.resource(apiServices, ApiServiceSchema, fieldManager),
    crds: kube.resource(crds, CrdSchema, fieldManager),
    services: kube.resource(services, z.looseObject({ metadata: ObjectMetaSchema }), fieldManager),
  };
}

/** Base64 of a Secret key, decoded; undefined when absent. */
export function secretText(secret: Secret | undefined, key: string): string | undefined {
  const b64 = secret?.data?.[key];
  return b64 === undefined ? undefined : Buffer.from(b64, 'base64').toString('utf8');
}
