/** Helpers for component tests and benchmarks of functions; never imported by production code. */
export { send, rawExchange, binaryHeaders, postUnfinished, type TestRequest, type TestResponse, type UnfinishedAnswer } from './http.js';
export {
  startFunctionProcess,
  startNodeProcess,
  listeningPort,
  REPO_ROOT,
  type FunctionProcess,
  type LogRecord,
  type Exit,
  type StartOptions,
} from './process.js';
export { probeFunction, probeConfig, startProbe, Hold, PROBE_BODY_LIMIT, type ProbeState } from './probe-function.js';
