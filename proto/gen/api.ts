import type * as grpc from '@grpc/grpc-js';
import type { MessageTypeDefinition } from '@grpc/proto-loader';

import type { Claim as _k8s_io_kubelet_pkg_apis_dra_v1_Claim, Claim__Output as _k8s_io_kubelet_pkg_apis_dra_v1_Claim__Output } from './k8s/io/kubelet/pkg/apis/dra/v1/Claim.js';
import type { DRAPluginClient as _k8s_io_kubelet_pkg_apis_dra_v1_DRAPluginClient, DRAPluginDefinition as _k8s_io_kubelet_pkg_apis_dra_v1_DRAPluginDefinition } from './k8s/io/kubelet/pkg/apis/dra/v1/DRAPlugin.js';
import type { Device as _k8s_io_kubelet_pkg_apis_dra_v1_Device, Device__Output as _k8s_io_kubelet_pkg_apis_dra_v1_Device__Output } from './k8s/io/kubelet/pkg/apis/dra/v1/Device.js';
import type { NodePrepareResourceResponse as _k8s_io_kubelet_pkg_apis_dra_v1_NodePrepareResourceResponse, NodePrepareResourceResponse__Output as _k8s_io_kubelet_pkg_apis_dra_v1_NodePrepareResourceResponse__Output } from './k8s/io/kubelet/pkg/apis/dra/v1/NodePrepareResourceResponse.js';
import type { NodePrepareResourcesRequest as _k8s_io_kubelet_pkg_apis_dra_v1_NodePrepareResourcesRequest, NodePrepareResourcesRequest__Output as _k8s_io_kubelet_pkg_apis_dra_v1_NodePrepareResourcesRequest__Output } from './k8s/io/kubelet/pkg/apis/dra/v1/NodePrepareResourcesRequest.js';
import type { NodePrepareResourcesResponse as _k8s_io_kubelet_pkg_apis_dra_v1_NodePrepareResourcesResponse, NodePrepareResourcesResponse__Output as _k8s_io_kubelet_pkg_apis_dra_v1_NodePrepareResourcesResponse__Output } from './k8s/io/kubelet/pkg/apis/dra/v1/NodePrepareResourcesResponse.js';
import type { NodeUnprepareResourceResponse as _k8s_io_kubelet_pkg_apis_dra_v1_NodeUnprepareResourceResponse, NodeUnprepareResourceResponse__Output as _k8s_io_kubelet_pkg_apis_dra_v1_NodeUnprepareResourceResponse__Output } from './k8s/io/kubelet/pkg/apis/dra/v1/NodeUnprepareResourceResponse.js';
import type { NodeUnprepareResourcesRequest as _k8s_io_kubelet_pkg_apis_dra_v1_NodeUnprepareResourcesRequest, NodeUnprepareResourcesRequest__Output as _k8s_io_kubelet_pkg_apis_dra_v1_NodeUnprepareResourcesRequest__Output } from './k8s/io/kubelet/pkg/apis/dra/v1/NodeUnprepareResourcesRequest.js';
import type { NodeUnprepareResourcesResponse as _k8s_io_kubelet_pkg_apis_dra_v1_NodeUnprepareResourcesResponse, NodeUnprepareResourcesResponse__Output as _k8s_io_kubelet_pkg_apis_dra_v1_NodeUnprepareResourcesResponse__Output } from './k8s/io/kubelet/pkg/apis/dra/v1/NodeUnprepareResourcesResponse.js';
import type { Claim as _k8s_io_kubelet_pkg_apis_dra_v1beta1_Claim, Claim__Output as _k8s_io_kubelet_pkg_apis_dra_v1beta1_Claim__Output } from './k8s/io/kubelet/pkg/apis/dra/v1beta1/Claim.js';
import type { DRAPluginClient as _k8s_io_kubelet_pkg_apis_dra_v1beta1_DRAPluginClient, DRAPluginDefinition as _k8s_io_kubelet_pkg_apis_dra_v1beta1_DRAPluginDefinition } from './k8s/io/kubelet/pkg/apis/dra/v1beta1/DRAPlugin.js';
import type { Device as _k8s_io_kubelet_pkg_apis_dra_v1beta1_Device, Device__Output as _k8s_io_kubelet_pkg_apis_dra_v1beta1_Device__Output } from './k8s/io/kubelet/pkg/apis/dra/v1beta1/Device.js';
import type { NodePrepareResourceResponse as _k8s_io_kubelet_pkg_apis_dra_v1beta1_NodePrepareResourceResponse, NodePrepareResourceResponse__Output as _k8s_io_kubelet_pkg_apis_dra_v1beta1_NodePrepareResourceResponse__Output } from './k8s/io/kubelet/pkg/apis/dra/v1beta1/NodePrepareResourceResponse.js';
import type { NodePrepareResourcesRequest as _k8s_io_kubelet_pkg_apis_dra_v1beta1_NodePrepareResourcesRequest, NodePrepareResourcesRequest__Output as _k8s_io_kubelet_pkg_apis_dra_v1beta1_NodePrepareResourcesRequest__Output } from './k8s/io/kubelet/pkg/apis/dra/v1beta1/NodePrepareResourcesRequest.js';
import type { NodePrepareResourcesResponse as _k8s_io_kubelet_pkg_apis_dra_v1beta1_NodePrepareResourcesResponse, NodePrepareResourcesResponse__Output as _k8s_io_kubelet_pkg_apis_dra_v1beta1_NodePrepareResourcesResponse__Output } from './k8s/io/kubelet/pkg/apis/dra/v1beta1/NodePrepareResourcesResponse.js';
import type { NodeUnprepareResourceResponse as _k8s_io_kubelet_pkg_apis_dra_v1beta1_NodeUnprepareResourceResponse, NodeUnprepareResourceResponse__Output as _k8s_io_kubelet_pkg_apis_dra_v1beta1_NodeUnprepareResourceResponse__Output } from './k8s/io/kubelet/pkg/apis/dra/v1beta1/NodeUnprepareResourceResponse.js';
import type { NodeUnprepareResourcesRequest as _k8s_io_kubelet_pkg_apis_dra_v1beta1_NodeUnprepareResourcesRequest, NodeUnprepareResourcesRequest__Output as _k8s_io_kubelet_pkg_apis_dra_v1beta1_NodeUnprepareResourcesRequest__Output } from './k8s/io/kubelet/pkg/apis/dra/v1beta1/NodeUnprepareResourcesRequest.js';
import type { NodeUnprepareResourcesResponse as _k8s_io_kubelet_pkg_apis_dra_v1beta1_NodeUnprepareResourcesResponse, NodeUnprepareResourcesResponse__Output as _k8s_io_kubelet_pkg_apis_dra_v1beta1_NodeUnprepareResourcesResponse__Output } from './k8s/io/kubelet/pkg/apis/dra/v1beta1/NodeUnprepareResourcesResponse.js';
import type { InfoRequest as _pluginregistration_InfoRequest, InfoRequest__Output as _pluginregistration_InfoRequest__Output } from './pluginregistration/InfoRequest.js';
import type { PluginInfo as _pluginregistration_PluginInfo, PluginInfo__Output as _pluginregistration_PluginInfo__Output } from './pluginregistration/PluginInfo.js';
import type { RegistrationClient as _pluginregistration_RegistrationClient, RegistrationDefinition as _pluginregistration_RegistrationDefinition } from './pluginregistration/Registration.js';
import type { RegistrationStatus as _pluginregistration_RegistrationStatus, RegistrationStatus__Output as _pluginregistration_RegistrationStatus__Output } from './pluginregistration/RegistrationStatus.js';
import type { RegistrationStatusResponse as _pluginregistration_RegistrationStatusResponse, RegistrationStatusResponse__Output as _pluginregistration_RegistrationStatusResponse__Output } from './pluginregistration/RegistrationStatusResponse.js';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  k8s: {
    io: {
      kubelet: {
        pkg: {
          apis: {
            dra: {
              v1: {
                Claim: MessageTypeDefinition<_k8s_io_kubelet_pkg_apis_dra_v1_Claim, _k8s_io_kubelet_pkg_apis_dra_v1_Claim__Output>
                DRAPlugin: SubtypeConstructor<typeof grpc.Client, _k8s_io_kubelet_pkg_apis_dra_v1_DRAPluginClient> & { service: _k8s_io_kubelet_pkg_apis_dra_v1_DRAPluginDefinition }
                Device: MessageTypeDefinition<_k8s_io_kubelet_pkg_apis_dra_v1_Device, _k8s_io_kubelet_pkg_apis_dra_v1_Device__Output>
                NodePrepareResourceResponse: MessageTypeDefinition<_k8s_io_kubelet_pkg_apis_dra_v1_NodePrepareResourceResponse, _k8s_io_kubelet_pkg_apis_dra_v1_NodePrepareResourceResponse__Output>
                NodePrepareResourcesRequest: MessageTypeDefinition<_k8s_io_kubelet_pkg_apis_dra_v1_NodePrepareResourcesRequest, _k8s_io_kubelet_pkg_apis_dra_v1_NodePrepareResourcesRequest__Output>
                NodePrepareResourcesResponse: MessageTypeDefinition<_k8s_io_kubelet_pkg_apis_dra_v1_NodePrepareResourcesResponse, _k8s_io_kubelet_pkg_apis_dra_v1_NodePrepareResourcesResponse__Output>
                NodeUnprepareResourceResponse: MessageTypeDefinition<_k8s_io_kubelet_pkg_apis_dra_v1_NodeUnprepareResourceResponse, _k8s_io_kubelet_pkg_apis_dra_v1_NodeUnprepareResourceResponse__Output>
                NodeUnprepareResourcesRequest: MessageTypeDefinition<_k8s_io_kubelet_pkg_apis_dra_v1_NodeUnprepareResourcesRequest, _k8s_io_kubelet_pkg_apis_dra_v1_NodeUnprepareResourcesRequest__Output>
                NodeUnprepareResourcesResponse: MessageTypeDefinition<_k8s_io_kubelet_pkg_apis_dra_v1_NodeUnprepareResourcesResponse, _k8s_io_kubelet_pkg_apis_dra_v1_NodeUnprepareResourcesResponse__Output>
              }
              v1beta1: {
                Claim: MessageTypeDefinition<_k8s_io_kubelet_pkg_apis_dra_v1beta1_Claim, _k8s_io_kubelet_pkg_apis_dra_v1beta1_Claim__Output>
                DRAPlugin: SubtypeConstructor<typeof grpc.Client, _k8s_io_kubelet_pkg_apis_dra_v1beta1_DRAPluginClient> & { service: _k8s_io_kubelet_pkg_apis_dra_v1beta1_DRAPluginDefinition }
                Device: MessageTypeDefinition<_k8s_io_kubelet_pkg_apis_dra_v1beta1_Device, _k8s_io_kubelet_pkg_apis_dra_v1beta1_Device__Output>
                NodePrepareResourceResponse: MessageTypeDefinition<_k8s_io_kubelet_pkg_apis_dra_v1beta1_NodePrepareResourceResponse, _k8s_io_kubelet_pkg_apis_dra_v1beta1_NodePrepareResourceResponse__Output>
                NodePrepareResourcesRequest: MessageTypeDefinition<_k8s_io_kubelet_pkg_apis_dra_v1beta1_NodePrepareResourcesRequest, _k8s_io_kubelet_pkg_apis_dra_v1beta1_NodePrepareResourcesRequest__Output>
                NodePrepareResourcesResponse: MessageTypeDefinition<_k8s_io_kubelet_pkg_apis_dra_v1beta1_NodePrepareResourcesResponse, _k8s_io_kubelet_pkg_apis_dra_v1beta1_NodePrepareResourcesResponse__Output>
                NodeUnprepareResourceResponse: MessageTypeDefinition<_k8s_io_kubelet_pkg_apis_dra_v1beta1_NodeUnprepareResourceResponse, _k8s_io_kubelet_pkg_apis_dra_v1beta1_NodeUnprepareResourceResponse__Output>
                NodeUnprepareResourcesRequest: MessageTypeDefinition<_k8s_io_kubelet_pkg_apis_dra_v1beta1_NodeUnprepareResourcesRequest, _k8s_io_kubelet_pkg_apis_dra_v1beta1_NodeUnprepareResourcesRequest__Output>
                NodeUnprepareResourcesResponse: MessageTypeDefinition<_k8s_io_kubelet_pkg_apis_dra_v1beta1_NodeUnprepareResourcesResponse, _k8s_io_kubelet_pkg_apis_dra_v1beta1_NodeUnprepareResourcesResponse__Output>
              }
            }
          }
        }
      }
    }
  }
  pluginregistration: {
    InfoRequest: MessageTypeDefinition<_pluginregistration_InfoRequest, _pluginregistration_InfoRequest__Output>
    PluginInfo: MessageTypeDefinition<_pluginregistration_PluginInfo, _pluginregistration_PluginInfo__Output>
    Registration: SubtypeConstructor<typeof grpc.Client, _pluginregistration_RegistrationClient> & { service: _pluginregistration_RegistrationDefinition }
    RegistrationStatus: MessageTypeDefinition<_pluginregistration_RegistrationStatus, _pluginregistration_RegistrationStatus__Output>
    RegistrationStatusResponse: MessageTypeDefinition<_pluginregistration_RegistrationStatusResponse, _pluginregistration_RegistrationStatusResponse__Output>
  }
}

