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
  ])('rejects %s with a BadRequestError naming the problem', (_what, headers, body, message) => {
    const attempt = (): Decoded => decode(headers, body);
    expect(attempt).toThrow(BadRequestError);
    expect(attempt).toThrow(message);
  });
});
