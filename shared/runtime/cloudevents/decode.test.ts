import { describe, expect, it } from '@jest/globals';
import { BadRequestError } from '../../errors/index.js';
import { decodeCloudEvents, type Decoded } from './decode.js';

const ce = { 'ce-id': 'e1', 'ce-source': '/src', 'ce-type': 'vm.created', 'ce-specversion': '1.0' };

function single(decoded: Decoded): Record<string, unknown> {
  if (decoded.mode === 'batch') throw new Error('expected a single event');
  return { mode: decoded.mode, ...decoded.event.toJSON() };
}

function decode(headers: Record<string, string>, body = ''): Decoded {
  return decodeCloudEvents({ headers, body: Buffer.from(body) });
}

describe('decodeCloudEvents', () => {
  it.each<[string, Record<string, string>, string, Record<string, unknown>]>([
    ['JSON data under application/json', { ...ce, 'content-type': 'application/json; charset=utf-8' }, '[1,2]', { data: [1, 2] }],
    // The SDK parses JSON data only under application/json, and a JSON scalar not at all.
    ['JSON data under another JSON media type as text', { ...ce, 'content-type': 'application/vnd.x+json' }, '[1,2]', { data: '[1,2]' }],
    ['a JSON scalar as text', { ...ce, 'content-type': 'application/json' }, '42', { data: '42' }],
    ['text data as a string', { ...ce, 'content-type': 'text/plain' }, 'hello', { data: 'hello' }],
    ['other data as bytes (base64 in JSON form)', { ...ce, 'content-type': 'application/octet-stream' }, 'hi', { data_base64: 'aGk=' }],
    ['no body as no data', ce, '', { data: undefined }],
    [
      'ce- extension headers as extensions',
      { ...ce, 'ce-vmname': 'alpha', 'ce-time': '2025-01-02T03:04:05Z' },
      '',
      { vmname: 'alpha', time: '2025-01-02T03:04:05.000Z' },
    ],
    [
      'header values as they are (the SDK does no percent-decoding)',
      { ...ce, 'ce-subject': 'Euro%20%E2%82%AC', 'ce-x': '"quoted"' },
      '',
      { subject: 'Euro%20%E2%82%AC', x: '"quoted"' },
    ],
    ['an empty JSON body as no data', { ...ce, 'content-type': 'application/json' }, '', { data: undefined }],
  ])('decodes a binary-mode event with %s', (_what, headers, body, expected) => {
    expect(single(decode(headers, body))).toMatchObject({ mode: 'binary', id: 'e1', type: 'vm.created', ...expected });
  });

  it('decodes a structured-mode event with its extensions and data', () => {
    const body = JSON.stringify({ id: 'e2', source: '/s', type: 't', specversion: '1.0', subject: 'vm/a', ext1: 'x', data: { a: 1 } });
    expect(single(decode({ 'content-type': 'application/cloudevents+json; charset=utf-8' }, body))).toMatchObject({
      mode: 'structured',
      id: 'e2',
      subject: 'vm/a',
      ext1: 'x',
      data: { a: 1 },
    });
  });

  it('decodes structured data_base64 as the SDK does (a typed array of the bytes) and drops context attributes set to null', () => {
    const body = JSON.stringify({ id: 'e3', source: 'urn:uuid:6e8bc430', type: 't', specversion: '1.0', subject: null, data_base64: 'aGk=' });
    const decoded = decode({ 'content-type': 'application/cloudevents+json' }, body);
    if (decoded.mode !== 'structured') throw new Error('expected a structured event');
    expect([ArrayBuffer.isView(decoded.event.data), Array.from(decoded.event.data as Uint32Array), decoded.event.subject]).toEqual([
      true,
      [104, 105],
      undefined,
    ]);
  });

  it.each<[string, unknown]>([
    ['0', 0],
    ['false', false],
    ['null', null],
    ['an empty string', ''],
  ])('drops structured data that is %s, as the SDK does', (_what, data) => {
    const body = JSON.stringify({ id: 'e4', source: '/s', type: 't', specversion: '1.0', data });
    expect(single(decode({ 'content-type': 'application/cloudevents+json' }, body))['data']).toBeUndefined();
  });

  it.each([
    '/tests',
    'urn:uuid:6e8bc430-9c3a-11d9-9669-0800200c9a66',
    'https://user@example.com:8443/a/b?c=d&e#f',
    '//example.com/x',
    '1-555-123-4567',
    'cloudevents/spec/pull/123',
    'mailto:someone@example.com',
    'http://[::1]:80/x',
    '/a%20b',
  ])('accepts the source %s (a URI reference)', (source) => {
    expect(single(decode({ ...ce, 'ce-source': source }))).toMatchObject({ source });
  });

  // ajv-formats' uri-reference, as the SDK checks it: ':no-scheme' passes it (our own check refused it).
  it.each(['a b', 'x:y z', '/a%zz', 'http://exa mple.com', 'a^b', 'http://[::1/x'])('rejects the source %j', (source) => {
    const body = JSON.stringify({ id: 'e', source, type: 't', specversion: '1.0' });
    expect(() => decode({ 'content-type': 'application/cloudevents+json' }, body)).toThrow('/source: must match format "uri-reference"');
  });

  it('decodes each batch element on its own and keeps the id of a broken one', () => {
    const body = JSON.stringify([{ id: 'a', source: '/s', type: 't', specversion: '1.0' }, { id: 'b', source: '/s' }, null]);
    const decoded = decode({ 'content-type': 'application/cloudevents-batch+json' }, body);
    if (decoded.mode !== 'batch') throw new Error('expected a batch');
    expect(decoded.items.map((item) => (item.ok ? item.event.id : [item.id, item.error.message]))).toEqual([
      'a',
      ['b', "invalid batch element 1: invalid payload; (event): must have required property 'type'"],
      [undefined, 'batch element 2 must be a JSON object, got null'],
    ]);
  });

  const structuredType = { 'content-type': 'application/cloudevents+json' };
  const base = { id: 'e', source: '/s', type: 't', specversion: '1.0' };
  const noCe = 'not a CloudEvent: expected a ce-id header';

  it.each<[string, Record<string, string>, string, string]>([
    ['an empty structured body', structuredType, '', 'structured CloudEvent body is empty; expected JSON'],
    ['a structured array', structuredType, '[]', "invalid structured CloudEvent: invalid payload; (event): must have required property 'source'"],
    ['an empty ce-id', { ...ce, 'ce-id': '' }, '', noCe],
    ['a bad extension name', { ...ce, 'ce-bad-name': 'x' }, '', 'invalid binary-mode CloudEvent: invalid attribute name: "bad-name"'],
    ['no ce-id at all', { 'ce-source': '/s', 'ce-type': 't', 'ce-specversion': '1.0' }, '', noCe],
    ['no required header but one', { 'ce-type': 't' }, '', noCe],
    ['a dataschema that is no URI', { ...ce, 'ce-dataschema': 'schemas/vm' }, '', '/dataschema: must match format "uri"'],
    ['malformed JSON data', { ...ce, 'content-type': 'application/json' }, '{"vm":', 'binary-mode CloudEvent is not valid JSON'],
    ['JSON data that is only whitespace', { ...ce, 'content-type': 'application/json' }, '  \n', 'binary-mode CloudEvent is not valid JSON'],
    ['a content type that is neither mode', { 'content-type': 'text/plain' }, 'hi', 'got Content-Type "text/plain" and no ce-id'],
    ['the CloudEvents type in another format', { 'content-type': 'application/cloudevents+avro' }, 'x', 'structured CloudEvent is not valid JSON'],
    ['structured: a numeric subject', structuredType, JSON.stringify({ ...base, subject: 7 }), '/subject: must be string'],
    ['structured: a numeric id', structuredType, JSON.stringify({ ...base, id: 7 }), '/id: must be string'],
    ['structured: an upper-case extension', structuredType, JSON.stringify({ ...base, vmName: 'a' }), 'invalid attribute name: "vmName"'],
    ['structured: the 0.3 schemaurl', structuredType, JSON.stringify({ ...base, schemaurl: 'https://x/s' }), 'cannot set schemaurl on version 1.0 event'],
    ['structured: data_base64 that is no string', structuredType, JSON.stringify({ ...base, data_base64: 5 }), 'not a CloudEvent (structured CloudEvent)'],
  ])('rejects %s with a BadRequestError naming the problem', (_what, headers, body, message) => {
    const attempt = (): Decoded => decode(headers, body);
    expect(attempt).toThrow(BadRequestError);
    expect(attempt).toThrow(message);
  });

  // Where the SDK is laxer than the host's own codec was (docs/adr/0020-function-host-on-express.md).
  it.each<[string, Record<string, string>, string]>([
    ['a date-only time', { ...ce, 'ce-time': '2025-01-02' }, ''],
    ['specversion 0.3', { ...ce, 'ce-specversion': '0.3' }, ''],
    ['specversion 2.0', { ...ce, 'ce-specversion': '2.0' }, ''],
    ['February 30 (read as March 2)', { ...ce, 'ce-time': '2025-02-30T00:00:00Z' }, ''],
    ['a time without zone', { ...ce, 'ce-time': '2025-01-01T10:00:00' }, ''],
    ['a truncated percent escape (values are not percent-decoded)', { ...ce, 'ce-subject': '100%' }, ''],
    ['ce-datacontenttype', { ...ce, 'ce-datacontenttype': 'text/plain' }, ''],
    ['text data without Content-Type', ce, 'hello'],
    ['structured: an empty subject', structuredType, JSON.stringify({ ...base, subject: '' })],
    ['structured: both data and data_base64', structuredType, JSON.stringify({ ...base, data: 1, data_base64: 'aGk=' })],
  ])('follows the SDK and accepts %s', (_what, headers, body) => {
    expect(() => decode(headers, body)).not.toThrow();
  });
});
