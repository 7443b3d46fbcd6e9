import { beforeAll, describe, expect, it } from 'vitest';
import { defaultLimits } from '../src/lib/limits.ts';
import { startTestApp, type TestApp } from './helpers.ts';
import { connect, until } from './ws-client.ts';

/**
 * GraphQL limits: each refused before execution with 400 `query_too_complex` naming the limit and
 * the operation's figure; authentication before parsing; bodies capped.
 */
let app: TestApp;
let key: string;

beforeAll(async () => {
  app = await startTestApp({ limits: { maxBodyBytes: 200_000 } });
  ({ key } = await app.clinicWithKey('dental', ['patients:read', 'appointments:read']));
});

const HEAVY =
  'patients(first: 100) { edges { node { id firstName appointments(first: 100) { edges { node { id start status { name } } } } } } }';

async function refused(query: string, variables: Record<string, unknown> = {}) {
  const before = app.queries.length;
  const r = await app.gql(query, variables, key);
  // Nothing reached the database: refused before execution.
  const statements = app.queries.slice(before).filter((q) => !/api_key|rate_limit/.test(q));
  expect(statements).toEqual([]);
  expect(r.status, JSON.stringify(r.body).slice(0, 300)).toBe(400);
  expect(r.body.data).toBeUndefined();
  return r.body.errors[0];
}

describe('GraphQL limits', () => {
  it('refuses too many aliases, naming the limit and the figure', async () => {
    // Light enough to stay under the token limit, checked first.
    const aliases = Array.from(
      { length: 40 },
      (_, i) => `a${i}: patients(first: 1) { edges { cursor } }`,
    ).join(' ');
    const err = await refused(`{ ${aliases} }`);
    expect(err.extensions).toMatchObject({
      code: 'query_too_complex',
      limit: 'aliases',
      max: defaultLimits.graphqlMaxAliases,
      actual: 40,
    });
    expect(err.message).toMatch(/aliases limit: 40, at most 30/);
  });

  it('refuses an operation whose cost is over the limit; the cost follows `first` and variables', async () => {
    const err = await refused(`{ ${HEAVY} }`);
    expect(err.extensions).toMatchObject({ code: 'query_too_complex', limit: 'cost', max: 10_000 });
    expect(err.extensions.actual).toBeGreaterThan(10_000);
    const withVariable =
      'query($n: Int) { patients(first: 100) { edges { node { id appointments(first: $n) { edges { node { id } } } } } } }';
    expect((await refused(withVariable, { n: 100 })).extensions.limit).toBe('cost');
    const small = await app.gql(withVariable, { n: 5 }, key);
    expect(small.status).toBe(200);
    expect(small.body.errors).toBeUndefined();
  });

  it('refuses a selection nested too deep', async () => {
    const deep = `{ ${'patients(first: 1) { edges { node { appointments(first: 1) { edges { node { patient { owner { id } } } } } } } }'} }`;
    const ok = await app.gql(deep, {}, key);
    expect(ok.status).toBe(200);
    let q = 'id';
    for (let i = 0; i < 10; i++) q = `patient { ${q} } id`;
    const err = await refused(
      `{ patients(first: 1) { edges { node { appointments(first: 1) { edges { node { ${q} } } } } } } }`,
    );
    expect(err.extensions).toMatchObject({ code: 'query_too_complex', limit: 'depth', max: 12 });
  });

  it('refuses a document of too many tokens, and a 20,000-level nesting, while parsing', async () => {
    const many = `{ ${Array.from({ length: 2500 }, () => '__typename').join(' ')} }`;
    const err = await refused(many);
    expect(err.extensions).toMatchObject({ code: 'query_too_complex', limit: 'tokens', max: 2000 });
    const nested = `${'{ a '.repeat(20_000)}${'}'.repeat(20_000)}`;
    const deep = await refused(nested);
    expect(deep.extensions.code).toBe('query_too_complex');
  });

  it('refuses too many directives', async () => {
    const dirs = Array.from({ length: 40 }, () => '@include(if: true)').join(' ');
    const err = await refused(`{ __typename ${dirs} }`);
    expect(err.extensions).toMatchObject({
      code: 'query_too_complex',
      limit: 'directives',
      max: 30,
      actual: 40,
    });
  });

  it('suggests field names, over HTTP and over the websocket (the schema is public)', async () => {
    const typo = '{ patients(first: 1) { edges { node { firstNmae } } } }';
    const r = await app.gql(typo, {}, key);
    // Yoga answers an application/json request with 200 even for an invalid document.
    expect(r.status).toBe(200);
    expect(r.body.errors[0].extensions.code).toBe('invalid_request');
    expect(r.body.errors[0].message).toMatch(/Did you mean "firstName"/);
    const socket = connect(app.url, { Authorization: `Bearer ${key}` });
    try {
      const sub = socket.subscribe(typo);
      await until(() => sub.errors.length > 0);
      expect(sub.errors[0].message).toMatch(/Did you mean "firstName"/);
    } finally {
      await socket.dispose();
    }
  });
});

describe('before parsing', () => {
  it('authenticates first: no key is a 401 whatever the document (introspection aside), with no schema described', async () => {
    for (const query of [
      '{ patients(',
      '{ patients(first: 1) { edges { node { firstNmae } } } }',
      '{ __typename patients(first: 1) { edges { cursor } } }',
      '{ __schema { queryType { name } } firstNmae }',
    ]) {
      const r = await app.gql(query, {}, null);
      expect(r.status).toBe(401);
      expect(r.body.errors[0].extensions.code).toBe('unauthenticated');
      expect(JSON.stringify(r.body)).not.toMatch(/Did you mean|Syntax Error|firstNmae/);
    }
  });

  it('answers a body over the cap with 413 payload_too_large, without a key 401', async () => {
    const query = `{ ${'__typename '.repeat(30_000)} }`;
    const r = await app.gql(query, {}, key);
    expect(r.status).toBe(413);
    expect(r.body.errors[0].extensions.code).toBe('payload_too_large');
    const anonymous = await app.gql(query, {}, null);
    expect(anonymous.status).toBe(401);
    // Chunked (no Content-Length): the cap applies while reading.
    const chunked = await fetch(`${app.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: new Blob([JSON.stringify({ query })]).stream(),
      duplex: 'half',
    } as RequestInit);
    expect(chunked.status).toBe(413);
  });

  it('echoes nothing of an invalid JSON body and no internals', async () => {
    const res = await fetch(`${app.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: '{"query": "secret-looking-text',
    });
    expect(res.status).toBe(400);
    const text = await res.text();
    expect(text).not.toMatch(/secret-looking-text|originalError|stack/);
    expect(JSON.parse(text).errors[0].extensions.code).toBe('invalid_request');
  });
});
