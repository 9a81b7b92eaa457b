import { describe, expect, it } from '@jest/globals';
import { BadRequestError } from '../../errors/index.js';
import { decodeCloudEvents, type Decoded } from './decode.js';

const ce = { 'ce-id': 'e1', 'ce-source': '/src', 'ce-type': 'vm.created', 'ce-specversion': '1.0' };

function single(decoded: Decoded): Record<string, unknown> {
  if (decoded.mode === 'batch') throw new Error('expected a single event');
  return { mode: decoded.mode, ...decoded.event.toJSON() };
}

function structuredCases(): Array<[string, Record<string, string>, string, string]> {
  const type = { 'content-type': 'application/cloudevents+json' };
  const base = { id: 'e', source: '/s', type: 't', specversion: '1.0' };
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['an empty subject', { ...base, subject: '' }, 'invalid CloudEvent: subject must NOT have fewer than 1 characters'],
    ['a numeric subject', { ...base, subject: 7 }, 'invalid CloudEvent: subject must be string'],
    ['a numeric id', { ...base, id: 7 }, 'structured CloudEvent is missing id (non-empty strings)'],
    ['an object as specversion', { ...base, specversion: { v: 1 } }, 'structured CloudEvent is missing specversion'],
    ['an upper-case extension', { ...base, vmName: 'a' }, 'invalid CloudEvent: invalid attribute name: "vmName"'],
    ['the 0.3 schemaurl', { ...base, schemaurl: 'https://x/s' }, 'invalid CloudEvent: cannot set schemaurl on version 1.0 event'],
    ['data_base64 that is no string', { ...base, data_base64: 5 }, 'invalid CloudEvent: data_base64 must be string'],
    ['both data and data_base64', { ...base, data: 1, data_base64: 'aGk=' }, 'has both data and data_base64'],
    ['a time that is a number', { ...base, time: 1700000000 }, 'time 1700000000 is not an RFC 3339 timestamp'],
  ];
  return cases.map(([what, event, message]) => [`structured: ${what}`, type, JSON.stringify(event), message]);
}

function decode(headers: Record<string, string>, body = ''): Decoded {
  return decodeCloudEvents({ headers, body: Buffer.from(body) });
}

describe('decodeCloudEvents', () => {
  it.each<[string, Record<string, string>, string, Record<string, unknown>]>([
    ['JSON data under any JSON media type', { ...ce, 'content-type': 'application/vnd.x+json;charset=UTF-8' }, '[1,2]', { data: [1, 2] }],
    ['a JSON scalar as data', { ...ce, 'content-type': 'application/json' }, '42', { data: 42 }],
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
      'percent-encoded header values decoded once',
      { ...ce, 'ce-subject': 'Euro%20%E2%82%AC%20%f0%9f%98%80', 'ce-x': '100%2525' },
      '',
      { subject: 'Euro € 😀', x: '100%25' },
    ],
    ['a double-quoted header value unescaped', { ...ce, 'ce-subject': '"a \\"b\\" c"' }, '', { subject: 'a "b" c' }],
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

  it('decodes structured data_base64 as bytes and drops context attributes set to null', () => {
    const body = JSON.stringify({ id: 'e3', source: 'urn:uuid:6e8bc430', type: 't', specversion: '1.0', subject: null, data_base64: 'aGk=' });
    const decoded = decode({ 'content-type': 'application/cloudevents+json' }, body);
    if (decoded.mode !== 'structured') throw new Error('expected a structured event');
    expect([Buffer.isBuffer(decoded.event.data), String(decoded.event.data), decoded.event.subject]).toEqual([true, 'hi', undefined]);
  });

  it.each<[string, unknown]>([
    ['0', 0],
    ['false', false],
    ['null', null],
    ['an empty string', ''],
  ])('keeps structured data that is %s', (_what, data) => {
    const body = JSON.stringify({ id: 'e4', source: '/s', type: 't', specversion: '1.0', data });
    expect(single(decode({ 'content-type': 'application/cloudevents+json' }, body))).toMatchObject({ data });
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
    expect(single(decode({ ...ce, 'ce-source': encodeURIComponent(source) }))).toMatchObject({ source });
  });

  it.each(['a b', 'x:y z', '/a%zz', ':no-scheme', 'http://exa mple.com', 'a^b', 'http://[::1/x'])('rejects the source %j', (source) => {
    const body = JSON.stringify({ id: 'e', source, type: 't', specversion: '1.0' });
    expect(() => decode({ 'content-type': 'application/cloudevents+json' }, body)).toThrow('invalid CloudEvent: source must match format "uri-reference"');
  });

  it('decodes each batch element on its own and keeps the id of a broken one', () => {
    const body = JSON.stringify([{ id: 'a', source: '/s', type: 't', specversion: '1.0' }, { id: 'b', source: '/s' }, null]);
    const decoded = decode({ 'content-type': 'application/cloudevents-batch+json' }, body);
    if (decoded.mode !== 'batch') throw new Error('expected a batch');
    expect(decoded.items.map((item) => (item.ok ? item.event.id : [item.id, item.error.message]))).toEqual([
      'a',
      ['b', 'batch element 1 is missing type, specversion (non-empty strings)'],
      [undefined, 'batch element 2 must be a JSON object, got null'],
    ]);
  });

  it.each<[string, Record<string, string>, string, string]>([
    ['an empty structured body', { 'content-type': 'application/cloudevents+json' }, '', 'structured CloudEvent body is empty; expected JSON'],
    ['a structured array', { 'content-type': 'application/cloudevents+json' }, '[]', 'structured CloudEvent must be a JSON object, got array'],
    ['an empty ce-id', { ...ce, 'ce-id': '' }, '', 'binary-mode CloudEvent is missing ce-id (non-empty strings)'],
    ['a bad extension name', { ...ce, 'ce-bad-name': 'x' }, '', 'invalid CloudEvent: invalid attribute name: "bad-name"'],
    ['a date-only time', { ...ce, 'ce-time': '2025-01-02' }, '', 'binary-mode CloudEvent: ce-time "2025-01-02" is not an RFC 3339 timestamp'],
    ['specversion 0.3', { ...ce, 'ce-specversion': '0.3' }, '', 'unsupported CloudEvents specversion "0.3"; this host accepts 1.0'],
    ['specversion 2.0', { ...ce, 'ce-specversion': '2.0' }, '', 'unsupported CloudEvents specversion "2.0"; this host accepts 1.0'],
    ['no ce-id at all', { 'ce-source': '/s', 'ce-type': 't', 'ce-specversion': '1.0' }, '', 'binary-mode CloudEvent is missing ce-id (non-empty strings)'],
    ['no required header but one', { 'ce-type': 't' }, '', 'binary-mode CloudEvent is missing ce-id, ce-source, ce-specversion (non-empty strings)'],
    ['February 30', { ...ce, 'ce-time': '2025-02-30T00:00:00Z' }, '', 'ce-time "2025-02-30T00:00:00Z" is not an RFC 3339 timestamp'],
    ['hour 24', { ...ce, 'ce-time': '2025-01-01T24:00:00Z' }, '', 'ce-time "2025-01-01T24:00:00Z" is not an RFC 3339 timestamp'],
    ['a time without zone', { ...ce, 'ce-time': '2025-01-01T10:00:00' }, '', 'is not an RFC 3339 timestamp'],
    ['a truncated percent escape', { ...ce, 'ce-subject': '100%' }, '', 'ce-subject "100%" is not correctly percent-encoded UTF-8'],
    ['an overlong UTF-8 escape', { ...ce, 'ce-subject': '%C0%A0' }, '', 'ce-subject "%C0%A0" is not correctly percent-encoded UTF-8'],
    ['ce-datacontenttype', { ...ce, 'ce-datacontenttype': 'text/plain' }, '', 'its content type is the Content-Type header'],
    ['a dataschema that is no URI', { ...ce, 'ce-dataschema': 'schemas/vm' }, '', 'invalid CloudEvent: dataschema must match format "uri"'],
    ['malformed JSON data', { ...ce, 'content-type': 'application/json' }, '{"vm":', 'CloudEvent data (Content-Type application/json) is not valid JSON'],
    ['data in no JSON at all without Content-Type', ce, 'hello', 'CloudEvent data (Content-Type unset, read as JSON) is not valid JSON'],
    ['JSON data that is only whitespace', { ...ce, 'content-type': 'application/json' }, '  \n', 'is empty; expected JSON'],
    ['a content type that is neither mode', { 'content-type': 'text/plain' }, 'hi', 'not a CloudEvent: expected the headers ce-id'],
    ['a batch under the structured type', { 'content-type': 'application/cloudevents+json' }, '[{}]', 'must be a JSON object, got array'],
    ['the CloudEvents type in another format', { 'content-type': 'application/cloudevents+avro' }, 'x', 'only application/cloudevents+json is accepted'],
    ...structuredCases(),
  ])('rejects %s with a BadRequestError naming the problem', (_what, headers, body, message) => {
    const attempt = (): Decoded => decode(headers, body);
    expect(attempt).toThrow(BadRequestError);
    expect(attempt).toThrow(message);
  });
});
