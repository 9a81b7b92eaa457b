import type { Counter, Gauge, Registry } from '../../../shared/metrics/index.js';

const PREFIX = 'd8_virtualization_dra_usbip_';

/** USB/IP metrics, registered on the daemon's registry (served by its protected /metrics). */
export class UsbipMetrics {
  readonly requests: Counter<'op' | 'result'>;
  readonly connections: Gauge;
  readonly attachments: Counter<'op' | 'result'>;

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
  }
}
