export { condition, type ConditionSet } from './define.js';
export { VMCondition } from './vm.js';
export { CVICondition, VDCondition, VICondition } from './storage.js';
export { VMOPCondition } from './vmop.js';
export { VDSnapshotCondition, VMSOPCondition, VMSnapshotCondition } from './snapshots.js';
export {
  DVCRDeploymentCondition,
  NodeUSBDeviceCondition,
  USBDeviceCondition,
  VMBDACondition,
  VMClassCondition,
  VMIPCondition,
  VMIPLeaseCondition,
  VMMACCondition,
  VMMACLeaseCondition,
  VMPoolCondition,
} from './other.js';
