// Original file: proto/kubelet/dra/v1/api.proto

import type { Claim as _k8s_io_kubelet_pkg_apis_dra_v1_Claim, Claim__Output as _k8s_io_kubelet_pkg_apis_dra_v1_Claim__Output } from '../../../../../../../k8s/io/kubelet/pkg/apis/dra/v1/Claim.js';

export interface NodeUnprepareResourcesRequest {
  'claims'?: (_k8s_io_kubelet_pkg_apis_dra_v1_Claim)[];
}

export interface NodeUnprepareResourcesRequest__Output {
  'claims': (_k8s_io_kubelet_pkg_apis_dra_v1_Claim__Output)[];
}
