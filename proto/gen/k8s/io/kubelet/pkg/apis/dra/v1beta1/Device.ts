// Original file: proto/kubelet/dra/v1beta1/api.proto


export interface Device {
  'request_names'?: (string)[];
  'pool_name'?: (string);
  'device_name'?: (string);
  'cdi_device_ids'?: (string)[];
}

export interface Device__Output {
  'request_names': (string)[];
  'pool_name': (string);
  'device_name': (string);
  'cdi_device_ids': (string)[];
}
