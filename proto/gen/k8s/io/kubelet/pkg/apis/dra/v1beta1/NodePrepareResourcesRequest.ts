// Original file: proto/kubelet/dra/v1beta1/api.proto

import type { Claim as _k8s_io_kubelet_pkg_apis_dra_v1beta1_Claim, Claim__Output as _k8s_io_kubelet_pkg_apis_dra_v1beta1_Claim__Output } from '../../../../../../../k8s/io/kubelet/pkg/apis/dra/v1beta1/Claim.js';

export interface NodePrepareResourcesRequest {
  'claims'?: (_k8s_io_kubelet_pkg_apis_dra_v1beta1_Claim)[];
}

export interface NodePrepareResourcesRequest__Output {
  'claims': (_k8s_io_kubelet_pkg_apis_dra_v1beta1_Claim__Output)[];
}
