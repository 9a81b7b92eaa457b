/** Test helper: dispatch one event against a world and summarise the outcome. */
import { dispatch, type Outcome } from '../dispatch.js';
import type { Enrichment } from '../enrichment.js';
import type { AuditRecord } from '../records.js';
import { decoded, type EventInput } from './events.js';
import { goldenWorld } from './world.js';

export async function outcomeOf(overrides: EventInput, world: Enrichment = goldenWorld()): Promise<Outcome> {
  return dispatch(decoded(overrides), world);
}

/** The record the event yields; fails the test with the outcome when there is none. */
export async function recordOf(overrides: EventInput, world?: Enrichment): Promise<AuditRecord & Record<string, unknown>> {
  const outcome = await outcomeOf(overrides, world);
  if (outcome.outcome !== 'record') throw new Error(`expected a record, got ${JSON.stringify(outcome)}`);
  return outcome.record as AuditRecord & Record<string, unknown>;
}

/** `record:<kind>`, `not_logged:<kind>`, `undecidable:<kind>`, `failed` or `unmatched`. */
export async function verdict(overrides: EventInput, world?: Enrichment): Promise<string> {
  const o = await outcomeOf(overrides, world);
  return o.outcome === 'unmatched' ? 'unmatched' : `${o.outcome}:${o.kind ?? ''}`;
}
