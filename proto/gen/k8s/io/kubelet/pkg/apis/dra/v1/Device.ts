// Original file: proto/kubelet/dra/v1/api.proto


export interface Device {
  'request_names'?: (string)[];
  'pool_name'?: (string);
  'device_name'?: (string);
  'cdi_device_ids'?: (string)[];
  'share_id'?: (string);
  '_share_id'?: "share_id";
}

export interface Device__Output {
  'request_names': (string)[];
  'pool_name': (string);
  'device_name': (string);
  'cdi_device_ids': (string)[];
  'share_id'?: (string);
  '_share_id'?: "share_id";
}
