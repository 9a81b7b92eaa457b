/**
 * The kubelet gRPC services (registration v1, DRA v1 and v1beta1), loaded from the descriptor that
 * proto/generate.sh generates from proto/*.proto, with the types generated beside it. The loader
 * options are the ones the types were generated with.
 */
import { loadPackageDefinition } from '@grpc/grpc-js';
import { fromJSON, type Options } from '@grpc/proto-loader';
import type { ProtoGrpcType } from '../../../proto/gen/api.js';
import { descriptor } from '../../../proto/gen/descriptor.js';

export const LOADER_OPTIONS: Options = { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true };

export type KubeletProtos = ProtoGrpcType;

let loaded: KubeletProtos | undefined;

export function kubeletProtos(): KubeletProtos {
  loaded ??= loadPackageDefinition(fromJSON(descriptor as Parameters<typeof fromJSON>[0], LOADER_OPTIONS)) as unknown as KubeletProtos;
  return loaded;
}

/** The DRA API versions served, in kubelet's order of preference, as advertised in GetInfo. */
export const DRA_VERSIONS = ['v1', 'v1beta1'] as const;
export type DraVersion = (typeof DRA_VERSIONS)[number];
export const SUPPORTED_VERSIONS = DRA_VERSIONS.map((v) => `${v}.DRAPlugin`);

export type { Claim__Output as Claim } from '../../../proto/gen/k8s/io/kubelet/pkg/apis/dra/v1/Claim.js';
export type { Device as PreparedDevice } from '../../../proto/gen/k8s/io/kubelet/pkg/apis/dra/v1/Device.js';
export type { NodePrepareResourceResponse as PrepareResult } from '../../../proto/gen/k8s/io/kubelet/pkg/apis/dra/v1/NodePrepareResourceResponse.js';
export type { NodeUnprepareResourceResponse as UnprepareResult } from '../../../proto/gen/k8s/io/kubelet/pkg/apis/dra/v1/NodeUnprepareResourceResponse.js';
