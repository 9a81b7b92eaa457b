// Original file: proto/kubelet/dra/v1/api.proto

import type { Device as _k8s_io_kubelet_pkg_apis_dra_v1_Device, Device__Output as _k8s_io_kubelet_pkg_apis_dra_v1_Device__Output } from '../../../../../../../k8s/io/kubelet/pkg/apis/dra/v1/Device.js';

export interface NodePrepareResourceResponse {
  'devices'?: (_k8s_io_kubelet_pkg_apis_dra_v1_Device)[];
  'error'?: (string);
}

export interface NodePrepareResourceResponse__Output {
  'devices': (_k8s_io_kubelet_pkg_apis_dra_v1_Device__Output)[];
  'error': (string);
}
