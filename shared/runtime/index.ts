export {
  defineFunction,
  type Awaitable,
  type CloudEventHandler,
  type FunctionContext,
  type FunctionDefinition,
  type HandlerContext,
  type HttpMethod,
  type InitContext,
  type Route,
  type RouteRequest,
  type RouteResponse,
  type SenderCheck,
  type SenderRequest,
  type SenderVerdict,
  type UpgradeHandler,
  type UpgradeRequest,
} from './types.js';
export { serve, type ServeOptions, type ServerHandle } from './server.js';
export { runIfMain, runMain } from './main.js';
export type { ShutdownReport } from './lifecycle.js';
export { hostConfigSchema, type HostConfig, type Env } from './config.js';
export { CLOUDEVENTS_PATH } from './app.js';
export { LIVENESS_PATH, READINESS_PATH, METRICS_PATH } from './health.js';
export { DefinitionError, HeadersTooLargeError, RequestTimeoutError } from './errors.js';
export { decodeCloudEvents, type Decoded, type BatchItem, type RawMessage } from './cloudevents/decode.js';
export type { BatchResult } from './cloudevents/encode.js';
