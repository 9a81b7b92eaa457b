import { describe, expect, it } from '@jest/globals';
import { decodeBody, decodeValue, type ElementResult } from './codec.js';
import { auditEvent, vectorEvent } from './testing/events.js';

const ndjson = (...lines: string[]): string => lines.join('\n');
const good = (): string => JSON.stringify(vectorEvent(auditEvent()));
const summary = (results: ElementResult[]): string[] => results.map((r) => (r.ok ? `${r.index}:ok` : `${r.index}:${r.reason}`));
const FIVE_MB = 5 * 1024 * 1024;

describe('decodeBody', () => {
  it('decodes a Vector JSON array into one event per element, in order', () => {
    const events = [auditEvent({ verb: 'create' }), auditEvent({ verb: 'delete' })];
    const results = decodeBody(JSON.stringify(events.map(vectorEvent)));
    expect(results.map((r) => (r.ok ? r.event.verb : r.reason))).toEqual(['create', 'delete']);
  });

  it('decodes NDJSON, with CRLF line ends and blank lines, into one event per non-blank line', () => {
    expect(summary(decodeBody(`${good()}\r\n\r\n${good()}\n`))).toEqual(['0:ok', '1:ok']);
  });

  it('rejects a line that is not JSON and still decodes the lines around it', () => {
    const results = decodeBody(ndjson(good(), '{"message": broken', good()));
    expect(summary(results)).toEqual(['0:ok', '1:invalid_json', '2:ok']);
  });

  it('names the line that is not JSON, counting blank lines, never quoting the engine’s message text', () => {
    // V8 quotes the input in its message: a line reading like a message must not steer the answer.
    const results = decodeBody(ndjson('Unexpected end', '', 'nope at position 42', '{"kind":"Event","auditID":"a', good()));
    expect(results.map((r) => (r.ok ? 'ok' : r.detail))).toEqual(['invalid JSON on line 1', 'invalid JSON on line 3', 'invalid JSON on line 4', 'ok']);
  });

  it('rejects a message that is not JSON', () => {
    const [first] = decodeBody(JSON.stringify([vectorEvent(auditEvent()), { message: 'not json at all' }])).slice(1);
    expect(first).toMatchObject({ ok: false, index: 1, reason: 'invalid_json', detail: 'invalid JSON in the message of element 1' });
  });

  it('rejects an element of unknown shape and keeps the rest of the batch', () => {
    const batch = [vectorEvent(auditEvent()), { hello: 'world' }, 42, vectorEvent({ kind: 'Pod' }), { message: 7 }];
    expect(summary(decodeBody(JSON.stringify(batch)))).toEqual(['0:ok', '1:missing_message', '2:unknown_shape', '3:unknown_shape', '4:unknown_shape']);
  });

  it('rejects an audit event missing required fields, naming them', () => {
    const broken = auditEvent();
    delete broken['auditID'];
    delete broken['verb'];
    const [result] = decodeBody(JSON.stringify([vectorEvent(broken)]));
    expect(result).toMatchObject({ ok: false, reason: 'invalid_audit_event' });
    expect(result?.ok === false && result.detail).toMatch(/auditID.*verb/);
  });

  it('rejects an event of another API version', () => {
    const [result] = decodeBody(JSON.stringify(vectorEvent(auditEvent({ apiVersion: 'audit.k8s.io/v1beta1' } as never))));
    expect(result).toMatchObject({ ok: false, reason: 'unknown_shape' });
  });

  it('rejects a 5 MB audit line inside a JSON array and decodes its neighbours', () => {
    const huge = { message: JSON.stringify({ ...auditEvent(), padding: 'x'.repeat(FIVE_MB) }) };
    const results = decodeBody(JSON.stringify([vectorEvent(auditEvent()), huge, vectorEvent(auditEvent())]));
    expect(summary(results)).toEqual(['0:ok', '1:line_too_large', '2:ok']);
  });

  it('rejects a 5 MB NDJSON line without parsing it and decodes its neighbours', () => {
    const results = decodeBody(ndjson(good(), 'x'.repeat(FIVE_MB), good()));
    expect(summary(results)).toEqual(['0:ok', '1:line_too_large', '2:ok']);
  });

  it('measures the line limit in UTF-8 bytes, not characters', () => {
    const line = JSON.stringify(vectorEvent({ ...auditEvent(), note: 'é'.repeat(600) }));
    expect(summary(decodeBody(line, { maxLineBytes: line.length + 10 }))).toEqual(['0:line_too_large']);
    expect(summary(decodeBody(line, { maxLineBytes: Buffer.byteLength(line) }))).toEqual(['0:ok']);
  });

  it('rejects a JSON array with a syntax error as a single element', () => {
    expect(decodeBody(`[${good()},{"message":`)).toEqual([{ ok: false, index: 0, reason: 'invalid_json', detail: 'invalid JSON in the array body' }]);
  });

  it('decodes an apiserver EventList, rejecting only its broken item', () => {
    const list = { kind: 'EventList', apiVersion: 'audit.k8s.io/v1', metadata: {}, items: [auditEvent(), { kind: 'Event' }, auditEvent()] };
    expect(summary(decodeBody(JSON.stringify(list)))).toEqual(['0:ok', '1:invalid_audit_event', '2:ok']);
  });

  it('decodes a single audit event body and a Vector event whose message is an object', () => {
    expect(summary(decodeBody(JSON.stringify(auditEvent())))).toEqual(['0:ok']);
    expect(summary(decodeBody(JSON.stringify({ message: auditEvent() })))).toEqual(['0:ok']);
  });

  it('yields no elements for an empty body or an EventList without items', () => {
    expect(decodeBody('')).toEqual([]);
    expect(decodeBody(Buffer.from(JSON.stringify({ kind: 'EventList', items: null })))).toEqual([]);
  });

  it('accepts a Buffer body the same as a string', () => {
    expect(summary(decodeBody(Buffer.from(ndjson(good(), good()))))).toEqual(['0:ok', '1:ok']);
  });

  it('keeps rejection details free of the element content', () => {
    const secret = 'S3CR3T-TOKEN';
    const bodies = [JSON.stringify([{ message: `${secret} {` }]), `${secret}\n${good()}`, `[${secret}]`];
    for (const body of bodies) {
      const [first] = decodeBody(body);
      expect(first).toMatchObject({ ok: false, reason: 'invalid_json' });
      expect(JSON.stringify(first)).not.toContain(secret);
    }
  });
});

describe('decodeValue', () => {
  it('treats a non-object, non-array value as one element of unknown shape', () => {
    expect(summary(decodeValue('text'))).toEqual(['0:unknown_shape']);
    expect(summary(decodeValue(null))).toEqual(['0:unknown_shape']);
  });

  it('rejects an EventList whose items is not an array', () => {
    expect(summary(decodeValue({ kind: 'EventList', items: {} }))).toEqual(['0:unknown_shape']);
  });
});
