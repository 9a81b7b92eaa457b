import { Registry, type Counter, type Gauge, type Histogram } from '../../shared/metrics/index.js';

const PREFIX = 'd8_virtualization_dra_';

/** Prometheus metrics of the DRA daemon, one registry per process. */
export class DraMetrics {
  readonly registry = new Registry({ processMetrics: true });
  readonly devices: Gauge;
  readonly skippedEntries: Gauge;
  readonly scans: Counter;
  readonly scanDuration: Histogram;
  readonly publishes: Counter<'result'>;
  readonly poolGeneration: Gauge;
  readonly rpcs: Counter<'method' | 'version' | 'result'>;
  readonly claimResults: Counter<'method' | 'result'>;
  readonly rpcDuration: Histogram<'method'>;
  readonly preparedClaims: Gauge;
  readonly claimReads: Counter<'source'>;
  readonly addressWrites: Counter<'when'>;

  constructor() {
    const r = this.registry;
    this.devices = r.gauge({ name: `${PREFIX}devices`, help: 'USB devices found on the node and published.' });
    this.skippedEntries = r.gauge({
      name: `${PREFIX}skipped_entries`,
      help: 'sysfs USB entries skipped at the last scan because files were missing or garbage.',
    });
    this.scans = r.counter({ name: `${PREFIX}scans_total`, help: 'sysfs scans (poll, inotify, resync).' });
    this.scanDuration = r.histogram({ name: `${PREFIX}scan_duration_seconds`, help: 'Time one sysfs scan took.' });
    this.publishes = r.counter({
      name: `${PREFIX}slice_publishes_total`,
      help: 'ResourceSlice publications by result (changed, resync, failed).',
      labelNames: ['result'],
    });
    this.poolGeneration = r.gauge({ name: `${PREFIX}pool_generation`, help: "Generation of the node's pool last published." });
    this.rpcs = r.counter({
      name: `${PREFIX}kubelet_rpcs_total`,
      help: 'kubelet gRPC calls by method, DRA version and result.',
      labelNames: ['method', 'version', 'result'],
    });
    this.claimResults = r.counter({
      name: `${PREFIX}claims_total`,
      help: 'Claims prepared or unprepared by method and result (ok, error).',
      labelNames: ['method', 'result'],
    });
    this.rpcDuration = r.histogram({ name: `${PREFIX}kubelet_rpc_duration_seconds`, help: 'Time one kubelet gRPC call took.', labelNames: ['method'] });
    this.preparedClaims = r.gauge({ name: `${PREFIX}prepared_claims`, help: 'Claims prepared on this node (checkpointed).' });
    this.claimReads = r.counter({
      name: `${PREFIX}claim_reads_total`,
      help: 'ResourceClaims read for a prepare, by source (cache: the informer had it; apiserver: a GET).',
      labelNames: ['source'],
    });
    this.addressWrites = r.counter({
      name: `${PREFIX}address_annotation_writes_total`,
      help: "Writes of a claim's device-addresses annotation, by when (ahead: on seeing the allocation; prepare: in NodePrepareResources).",
      labelNames: ['when'],
    });
  }
}
