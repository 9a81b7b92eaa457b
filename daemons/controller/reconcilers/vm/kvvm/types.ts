import type { VMISpec } from '../../../../../shared/api/internal/kubevirt.js';

/** KubeVirt shapes the builder produces, derived from the shared/api schemas. */
export type Devices = NonNullable<VMISpec['domain']['devices']>;
export type Disk = NonNullable<Devices['disks']>[number];
export type Volume = NonNullable<VMISpec['volumes']>[number];
export type { VMISpec };
