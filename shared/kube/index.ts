export { KubeClient, type KubeClientOptions } from './client.js';
export {
  apiVersionOf,
  describeObject,
  descriptorOf,
  objectKey,
  refOf,
  resourcePath,
  type KubeObject,
  type ObjectMeta,
  type ObjectRef,
  type OwnerReference,
  type ResourceDescriptor,
} from './descriptor.js';
export { InvalidObjectError, apiError, isGone, statusFromBody, type StatusBody } from './errors.js';
export { decodeObject, type Decoded } from './decode.js';
export {
  ResourceClient,
  type CallOptions,
  type DeleteOptions,
  type ListOptions,
  type ListResult,
  type PatchOptions,
  type ResourcePort,
  type WriteOptions,
} from './resource-client.js';
export { RestTransport, type RestRequest } from './rest.js';
export {
  PatchTestFailedError,
  PatchType,
  addFinalizerOps,
  applyJsonPatch,
  applyMergePatch,
  conditionalMergePatch,
  pointer,
  pointerSegment,
  removeFinalizerOps,
  statusMergePatch,
  type JsonPatchOp,
} from './patch.js';
export { addFinalizer, hasFinalizer, removeFinalizer } from './finalizers.js';
export { withoutManagedFields } from './trim.js';
export { controllerRefOf, hasControllerReference, ownerReferenceTo, withControllerReference } from './owner-refs.js';
export { kubeObjectSchema, microTimeSchema, objectReferenceSchema } from './schemas.js';
export {
  Informer,
  failureKind,
  type InformerEvent,
  type InformerFailure,
  type InformerHandlers,
  type InformerOptions,
  type InformerStats,
} from './informer.js';
export { Store, type InvalidEntry } from './store.js';
export { runWatch, decodeWatchLine, type WatchEvent, type WatchEventType } from './watch.js';
export { Backoff, doublingDelay, sleep, untilAborted, type BackoffOptions } from './backoff.js';
export { formatMicroTime, formatMicroTimeFromDate, nowMicros, parseMicroTime, type EpochMicros } from './microtime.js';
export { leaseDescriptor, leaseSchema, type Lease, type LeaseSpec } from './lease.js';
export { LeaderElector, type LeaderElectionOptions, type LeaseStore } from './leader-election.js';
export { EventRecorder, eventDescriptor, eventSchema, type EventInput, type EventRecorderOptions, type EventStore, type KubeEvent } from './events.js';
export { labelSelectorKeys, labelsMatchingAs, splitLabelSelector } from './label-selector.js';
