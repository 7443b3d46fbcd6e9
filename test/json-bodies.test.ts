import { beforeAll, describe, expect, it } from 'vitest';
import { checkJsonText } from '../src/lib/json-text.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * Every JSON body (REST, GraphQL, the network callback: test/callback.test.ts) is checked before
 * it is parsed and walked: nesting is bounded (a body 200,000 levels deep overflowed the stack of
 * the Idempotency-Key canonicaliser, a 500) and U+0000, which PostgreSQL cannot store, is a 422.
 */
let app: TestApp;
let write: string;
let read: string;
const deep = `${'['.repeat(200_000)}${']'.repeat(200_000)}`;

beforeAll(async () => {
  app = await startTestApp();
  const c = await app.clinicWithKey('dental', ['patients:read']);
  read = c.key;
  write = await app.key(c.clinicId, ['chat:write']);
});

describe('nesting', () => {
  it('a REST body 200,000 levels deep with an Idempotency-Key is a 400, not a stack overflow', async () => {
    const r = await app.post('/v1/chat/messages', `{"to":"0501234567","text":${deep}}`, write, {
      'idempotency-key': 'deep-1',
    });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'invalid_request' });
    expect(r.body.error.message).toMatch(/nested deeper than 32 levels/);
  });

  it('a GraphQL body as deep is refused before its variables are coerced', async () => {
    const body = `{"query":"query($x: String) { patients(first: 1, query: $x) { edges { cursor } } }","variables":{"x":${deep}}}`;
    const r = await app.post('/graphql', body, read);
    expect(r.body.errors[0].message).toMatch(/nested deeper than 32 levels/);
    expect(r.body.errors[0].extensions.code).toBe('invalid_request');
  });

  it('counts only structure: brackets in strings, escapes and 32 levels pass', () => {
    expect(() => checkJsonText(`{"a":"${'['.repeat(100)}"}`, 32)).not.toThrow();
    expect(() => checkJsonText(`${'['.repeat(32)}${']'.repeat(32)}`, 32)).not.toThrow();
    expect(() => checkJsonText(`${'['.repeat(33)}${']'.repeat(33)}`, 32)).toThrow(/deeper than 32/);
    expect(() => checkJsonText(String.raw`{"a":"\"[[[[","b":"\\u0000"}`, 2)).not.toThrow();
    expect(() => checkJsonText(String.raw`{"a":"x\u0000"}`, 2)).toThrow(/^a contains U\+0000/);
    const paramOf = (text: string) => {
      try {
        checkJsonText(text, 8);
      } catch (e) {
        return (e as { param?: string }).param;
      }
    };
    expect(paramOf(String.raw`{"a":1,"media":{"url":"\u0000","b":"c"}}`)).toBe('media.url');
    expect(paramOf(String.raw`{"a":{"b":1},"params":["x","\u0000"]}`)).toBe('params');
    expect(paramOf(String.raw`{"a":{"b\u0000":1}}`)).toBe('a');
    expect(paramOf(String.raw`["\u0000"]`)).toBe(undefined);
    expect(() => checkJsonText(String.raw`{"a":"\u0000"}`, 8, { nul: false })).not.toThrow();
  });
});

describe('U+0000', () => {
  it('in a REST body, GraphQL variables or a sandbox mutation is a validation error, never a 5xx', async () => {
    const rest = await app.post('/v1/chat/messages', { to: '0501234567', text: 'a\u0000b' }, write);
    expect(rest.status).toBe(422);
    expect(rest.body.error.param).toBe('text');
    const vars = await app.gql(
      'query($q: String) { patients(first: 1, query: $q) { edges { cursor } } }',
      { q: 'a\u0000' },
      read,
    );
    expect(vars.body.errors[0].extensions).toMatchObject({ code: 'validation_failed', param: 'query' });
    for (const args of ['text: "a\\u0000"', 'text: "a", name: "Dana\\u0000"']) {
      const r = await app.gql(
        `mutation { sandboxInbound(input: { from: "0501234567", ${args} }) { __typename } }`,
        {},
        write,
      );
      expect(r.status).toBe(200);
      expect(r.body.errors[0].extensions.code).toBe('validation_failed');
    }
  });
});
