import { AppError } from '../errors/index.js';

/** A metric was declared or used wrongly (bad name, duplicate, unknown label): a programming error. */
export class MetricDefinitionError extends AppError {
  readonly code = 'METRIC_DEFINITION';
  readonly status = 500;
}
