import { describe, expect, it } from '@jest/globals';
import { CloudEvent } from 'cloudevents';
import { encodeReply } from './encode.js';

const base = { id: 'r1', source: '/s', type: 't' };

describe('encodeReply', () => {
  it.each<[string, Partial<CloudEvent<unknown>>, string | Buffer | undefined]>([
    ['a string under a JSON type as a JSON string (the SDK alone sends it bare)', { data: 'pong', datacontenttype: 'application/json' }, '"pong"'],
    ['a string under a +json type as a JSON string', { data: 'a"b', datacontenttype: 'application/vnd.x+json; charset=utf-8' }, '"a\\"b"'],
    ['a string with no type as a JSON string (binary mode defaults to JSON)', { data: 'pong' }, '"pong"'],
    ['a JSON object', { data: { a: 1 } }, '{"a":1}'],
    ['text as it is', { data: 'plain', datacontenttype: 'text/plain' }, 'plain'],
    ['bytes as they are', { data: Buffer.from([1, 2, 3]), datacontenttype: 'application/octet-stream' }, Buffer.from([1, 2, 3])],
    ['no data as no body', {}, undefined],
  ])('writes binary-mode data: %s', (_what, fields, body) => {
    const reply = encodeReply('binary', new CloudEvent({ ...base, ...fields }));
    expect([reply.status, reply.headers['ce-id'], reply.body]).toEqual([200, 'r1', body]);
  });

  it('writes a structured-mode reply as one JSON document', () => {
    const reply = encodeReply('structured', new CloudEvent({ ...base, data: { a: 1 } }));
    expect(reply.headers['content-type']).toBe('application/cloudevents+json; charset=utf-8');
    expect(JSON.parse(String(reply.body))).toMatchObject({ ...base, specversion: '1.0', data: { a: 1 } });
  });

  it('answers 204 with no body when there is no reply event', () => {
    expect(encodeReply('binary', undefined)).toEqual({ status: 204, headers: {}, body: undefined });
  });
});
