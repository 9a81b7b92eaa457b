// Original file: proto/kubelet/pluginregistration/v1/api.proto


export interface RegistrationStatus {
  'plugin_registered'?: (boolean);
  'error'?: (string);
}

export interface RegistrationStatus__Output {
  'plugin_registered': (boolean);
  'error': (string);
}
