// Original file: proto/kubelet/pluginregistration/v1/api.proto


export interface PluginInfo {
  'type'?: (string);
  'name'?: (string);
  'endpoint'?: (string);
  'supported_versions'?: (string)[];
}

export interface PluginInfo__Output {
  'type': (string);
  'name': (string);
  'endpoint': (string);
  'supported_versions': (string)[];
}
