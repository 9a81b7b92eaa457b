// Original file: proto/kubelet/dra/v1/api.proto

import type { NodePrepareResourceResponse as _k8s_io_kubelet_pkg_apis_dra_v1_NodePrepareResourceResponse, NodePrepareResourceResponse__Output as _k8s_io_kubelet_pkg_apis_dra_v1_NodePrepareResourceResponse__Output } from '../../../../../../../k8s/io/kubelet/pkg/apis/dra/v1/NodePrepareResourceResponse.js';

export interface NodePrepareResourcesResponse {
  'claims'?: ({[key: string]: _k8s_io_kubelet_pkg_apis_dra_v1_NodePrepareResourceResponse});
}

export interface NodePrepareResourcesResponse__Output {
  'claims': ({[key: string]: _k8s_io_kubelet_pkg_apis_dra_v1_NodePrepareResourceResponse__Output});
}
