// Original file: proto/kubelet/dra/v1/api.proto


export interface NodeUnprepareResourceResponse {
  'error'?: (string);
}

export interface NodeUnprepareResourceResponse__Output {
  'error': (string);
}
