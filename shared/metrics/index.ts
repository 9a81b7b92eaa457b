export { Counter } from './counter.js';
export { Gauge } from './gauge.js';
export { Histogram, DEFAULT_SECONDS_BUCKETS, type HistogramOptions } from './histogram.js';
export { Registry, EXPOSITION_CONTENT_TYPE, type RegistryOptions } from './registry.js';
export { MetricDefinitionError } from './errors.js';
export type { Labels } from './labels.js';
export type { MetricOptions } from './series.js';
