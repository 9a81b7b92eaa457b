// Original file: proto/kubelet/dra/v1/api.proto

import type { NodeUnprepareResourceResponse as _k8s_io_kubelet_pkg_apis_dra_v1_NodeUnprepareResourceResponse, NodeUnprepareResourceResponse__Output as _k8s_io_kubelet_pkg_apis_dra_v1_NodeUnprepareResourceResponse__Output } from '../../../../../../../k8s/io/kubelet/pkg/apis/dra/v1/NodeUnprepareResourceResponse.js';

export interface NodeUnprepareResourcesResponse {
  'claims'?: ({[key: string]: _k8s_io_kubelet_pkg_apis_dra_v1_NodeUnprepareResourceResponse});
}

export interface NodeUnprepareResourcesResponse__Output {
  'claims': ({[key: string]: _k8s_io_kubelet_pkg_apis_dra_v1_NodeUnprepareResourceResponse__Output});
}
