// Original file: proto/kubelet/dra/v1beta1/api.proto


export interface Claim {
  'namespace'?: (string);
  'uid'?: (string);
  'name'?: (string);
}

export interface Claim__Output {
  'namespace': (string);
  'uid': (string);
  'name': (string);
}
