// Original file: proto/kubelet/dra/v1beta1/api.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { NodePrepareResourcesRequest as _k8s_io_kubelet_pkg_apis_dra_v1beta1_NodePrepareResourcesRequest, NodePrepareResourcesRequest__Output as _k8s_io_kubelet_pkg_apis_dra_v1beta1_NodePrepareResourcesRequest__Output } from '../../../../../../../k8s/io/kubelet/pkg/apis/dra/v1beta1/NodePrepareResourcesRequest.js';
import type { NodePrepareResourcesResponse as _k8s_io_kubelet_pkg_apis_dra_v1beta1_NodePrepareResourcesResponse, NodePrepareResourcesResponse__Output as _k8s_io_kubelet_pkg_apis_dra_v1beta1_NodePrepareResourcesResponse__Output } from '../../../../../../../k8s/io/kubelet/pkg/apis/dra/v1beta1/NodePrepareResourcesResponse.js';
import type { NodeUnprepareResourcesRequest as _k8s_io_kubelet_pkg_apis_dra_v1beta1_NodeUnprepareResourcesRequest, NodeUnprepareResourcesRequest__Output as _k8s_io_kubelet_pkg_apis_dra_v1beta1_NodeUnprepareResourcesRequest__Output } from '../../../../../../../k8s/io/kubelet/pkg/apis/dra/v1beta1/NodeUnprepareResourcesRequest.js';
import type { NodeUnprepareResourcesResponse as _k8s_io_kubelet_pkg_apis_dra_v1beta1_NodeUnprepareResourcesResponse, NodeUnprepareResourcesResponse__Output as _k8s_io_kubelet_pkg_apis_dra_v1beta1_NodeUnprepareResourcesResponse__Output } from '../../../../../../../k8s/io/kubelet/pkg/apis/dra/v1beta1/NodeUnprepareResourcesResponse.js';

export interface DRAPluginClient extends grpc.Client {
  NodePrepareResources(argument: _k8s_io_kubelet_pkg_apis_dra_v1beta1_NodePrepareResourcesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_k8s_io_kubelet_pkg_apis_dra_v1beta1_NodePrepareResourcesResponse__Output>): grpc.ClientUnaryCall;
  NodePrepareResources(argument: _k8s_io_kubelet_pkg_apis_dra_v1beta1_NodePrepareResourcesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_k8s_io_kubelet_pkg_apis_dra_v1beta1_NodePrepareResourcesResponse__Output>): grpc.ClientUnaryCall;
  NodePrepareResources(argument: _k8s_io_kubelet_pkg_apis_dra_v1beta1_NodePrepareResourcesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_k8s_io_kubelet_pkg_apis_dra_v1beta1_NodePrepareResourcesResponse__Output>): grpc.ClientUnaryCall;
  NodePrepareResources(argument: _k8s_io_kubelet_pkg_apis_dra_v1beta1_NodePrepareResourcesRequest, callback: grpc.requestCallback<_k8s_io_kubelet_pkg_apis_dra_v1beta1_NodePrepareResourcesResponse__Output>): grpc.ClientUnaryCall;
  nodePrepareResources(argument: _k8s_io_kubelet_pkg_apis_dra_v1beta1_NodePrepareResourcesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_k8s_io_kubelet_pkg_apis_dra_v1beta1_NodePrepareResourcesResponse__Output>): grpc.ClientUnaryCall;
  nodePrepareResources(argument: _k8s_io_kubelet_pkg_apis_dra_v1beta1_NodePrepareResourcesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_k8s_io_kubelet_pkg_apis_dra_v1beta1_NodePrepareResourcesResponse__Output>): grpc.ClientUnaryCall;
  nodePrepareResources(argument: _k8s_io_kubelet_pkg_apis_dra_v1beta1_NodePrepareResourcesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_k8s_io_kubelet_pkg_apis_dra_v1beta1_NodePrepareResourcesResponse__Output>): grpc.ClientUnaryCall;
  nodePrepareResources(argument: _k8s_io_kubelet_pkg_apis_dra_v1beta1_NodePrepareResourcesRequest, callback: grpc.requestCallback<_k8s_io_kubelet_pkg_apis_dra_v1beta1_NodePrepareResourcesResponse__Output>): grpc.ClientUnaryCall;
  
  NodeUnprepareResources(argument: _k8s_io_kubelet_pkg_apis_dra_v1beta1_NodeUnprepareResourcesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_k8s_io_kubelet_pkg_apis_dra_v1beta1_NodeUnprepareResourcesResponse__Output>): grpc.ClientUnaryCall;
  NodeUnprepareResources(argument: _k8s_io_kubelet_pkg_apis_dra_v1beta1_NodeUnprepareResourcesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_k8s_io_kubelet_pkg_apis_dra_v1beta1_NodeUnprepareResourcesResponse__Output>): grpc.ClientUnaryCall;
  NodeUnprepareResources(argument: _k8s_io_kubelet_pkg_apis_dra_v1beta1_NodeUnprepareResourcesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_k8s_io_kubelet_pkg_apis_dra_v1beta1_NodeUnprepareResourcesResponse__Output>): grpc.ClientUnaryCall;
  NodeUnprepareResources(argument: _k8s_io_kubelet_pkg_apis_dra_v1beta1_NodeUnprepareResourcesRequest, callback: grpc.requestCallback<_k8s_io_kubelet_pkg_apis_dra_v1beta1_NodeUnprepareResourcesResponse__Output>): grpc.ClientUnaryCall;
  nodeUnprepareResources(argument: _k8s_io_kubelet_pkg_apis_dra_v1beta1_NodeUnprepareResourcesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_k8s_io_kubelet_pkg_apis_dra_v1beta1_NodeUnprepareResourcesResponse__Output>): grpc.ClientUnaryCall;
  nodeUnprepareResources(argument: _k8s_io_kubelet_pkg_apis_dra_v1beta1_NodeUnprepareResourcesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_k8s_io_kubelet_pkg_apis_dra_v1beta1_NodeUnprepareResourcesResponse__Output>): grpc.ClientUnaryCall;
  nodeUnprepareResources(argument: _k8s_io_kubelet_pkg_apis_dra_v1beta1_NodeUnprepareResourcesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_k8s_io_kubelet_pkg_apis_dra_v1beta1_NodeUnprepareResourcesResponse__Output>): grpc.ClientUnaryCall;
  nodeUnprepareResources(argument: _k8s_io_kubelet_pkg_apis_dra_v1beta1_NodeUnprepareResourcesRequest, callback: grpc.requestCallback<_k8s_io_kubelet_pkg_apis_dra_v1beta1_NodeUnprepareResourcesResponse__Output>): grpc.ClientUnaryCall;
  
}

export interface DRAPluginHandlers extends grpc.UntypedServiceImplementation {
  NodePrepareResources: grpc.handleUnaryCall<_k8s_io_kubelet_pkg_apis_dra_v1beta1_NodePrepareResourcesRequest__Output, _k8s_io_kubelet_pkg_apis_dra_v1beta1_NodePrepareResourcesResponse>;
  
  NodeUnprepareResources: grpc.handleUnaryCall<_k8s_io_kubelet_pkg_apis_dra_v1beta1_NodeUnprepareResourcesRequest__Output, _k8s_io_kubelet_pkg_apis_dra_v1beta1_NodeUnprepareResourcesResponse>;
  
}

export interface DRAPluginDefinition extends grpc.ServiceDefinition {
  NodePrepareResources: MethodDefinition<_k8s_io_kubelet_pkg_apis_dra_v1beta1_NodePrepareResourcesRequest, _k8s_io_kubelet_pkg_apis_dra_v1beta1_NodePrepareResourcesResponse, _k8s_io_kubelet_pkg_apis_dra_v1beta1_NodePrepareResourcesRequest__Output, _k8s_io_kubelet_pkg_apis_dra_v1beta1_NodePrepareResourcesResponse__Output>
  NodeUnprepareResources: MethodDefinition<_k8s_io_kubelet_pkg_apis_dra_v1beta1_NodeUnprepareResourcesRequest, _k8s_io_kubelet_pkg_apis_dra_v1beta1_NodeUnprepareResourcesResponse, _k8s_io_kubelet_pkg_apis_dra_v1beta1_NodeUnprepareResourcesRequest__Output, _k8s_io_kubelet_pkg_apis_dra_v1beta1_NodeUnprepareResourcesResponse__Output>
}
