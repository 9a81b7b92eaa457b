import type { Counter, Gauge, Registry } from '../../../shared/metrics/index.js';

const PREFIX = 'd8_virtualization_dra_usbip_';

/** USB/IP metrics, registered on the daemon's registry (served by its protected /metrics). */
export class UsbipMetrics {
  readonly requests: Counter<'op' | 'result'>;
  readonly connections: Gauge;
  readonly attachments: Counter<'op' | 'result'>;
  readonly importDenials: Counter<'reason'>;

  constructor(registry: Registry) {
    this.requests = registry.counter({
      name: `${PREFIX}requests_total`,
      help: 'USB/IP requests served by op (devlist, import, handshake, unknown) and result (ok or the refusal).',
      labelNames: ['op', 'result'],
    });
    this.connections = registry.gauge({ name: `${PREFIX}open_connections`, help: 'USB/IP management connections open now (before hand-over to the kernel).' });
    this.attachments = registry.counter({
      name: `${PREFIX}attachments_total`,
      help: 'Imports attached to (or detached from) vhci_hcd on this node by op (attach, detach) and result.',
      labelNames: ['op', 'result'],
    });
    this.importDenials = registry.counter({
      name: `${PREFIX}import_denials_total`,
      help: 'Imports refused by the claim check (authorize.ts) by reason: not-allocated (no claim holds the device), other-node (the peer is not the node of a claim holding it), lookup-failed (the apiserver could not be read).',
      labelNames: ['reason'],
    });
  }
}
