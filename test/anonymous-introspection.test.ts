import { getIntrospectionQuery } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { defaultLimits } from '../src/lib/limits.ts';
import { introspectionCacheStats } from '../src/server/introspection-cache.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * Introspection without a key is priced by its work (issue 34: one document of 30 aliased
 * `__schema` roots answered 10 MB for 30 points, and two loops of it held a core): one root per
 * document and no aliases, answers kept by document, and the address charged the bytes it is
 * sent (docs/limits.md, Introspection without a key).
 */
let app: TestApp;
let key: string;

beforeAll(async () => {
  // Room for the answers this file asks for; the last test has the default budget.
  app = await startTestApp({ limits: { anonymousBytesPerWindow: 64 << 20 } });
  ({ key } = await app.clinicWithKey('dental', ['patients:read']));
});

/** GraphiQL's Docs pane sends this document. */
const GRAPHIQL = getIntrospectionQuery({ schemaDescription: true, inputValueDeprecation: true });
const FULL_TYPE = GRAPHIQL.slice(GRAPHIQL.indexOf('fragment FullType'));

/** The document: 30 aliased `__schema` roots, each with every type in full. */
const THIRTY_ROOTS = `{ ${Array.from({ length: 30 }, (_, i) => `s${i}: __schema { types { ...FullType } }`).join(' ')} } ${FULL_TYPE}`;

async function anonymous(
  url: string,
  query: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string; body: any; headers: Headers }> {
  const r = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query }),
  });
  const text = await r.text();
  return { status: r.status, text, body: JSON.parse(text), headers: r.headers };
}

describe('one root, no aliases, without a key', () => {
  it('refuses a second __schema or __type root, aliased or through fragments, with 400 query_too_complex', async () => {
    for (const [query, roots] of [
      [THIRTY_ROOTS, 30],
      ['{ a: __schema { queryType { name } } b: __schema { queryType { name } } }', 2],
      ['{ __schema { queryType { name } } __type(name: "Patient") { name } }', 2],
      [
        'query { ...A ...B } fragment A on Query { __schema { queryType { name } } } fragment B on Query { __type(name: "Patient") { name } }',
        2,
      ],
      ['{ __typename ... on Query { __type(name: "Patient") { name } } __schema { types { name } } }', 2],
      ['query A { __schema { queryType { name } } } query B { __type(name: "Patient") { name } }', 2],
    ] as const) {
      const before = introspectionCacheStats.executed;
      const r = await anonymous(app.url, query);
      expect(r.status, query.slice(0, 80)).toBe(400);
      expect(r.body.data).toBeUndefined();
      expect(r.body.errors[0].extensions).toMatchObject({
        code: 'query_too_complex',
        limit: 'introspection_roots',
        max: 1,
        actual: roots,
      });
      expect(r.body.errors[0].message).toMatch(/one __schema or __type root/);
      // Refused before anything executed.
      expect(introspectionCacheStats.executed).toBe(before);
    }
  });

  it('refuses aliases inside one root (the same 10 MB otherwise), __typename excepted', async () => {
    const nested = `{ __schema { ${Array.from({ length: 30 }, (_, i) => `t${i}: types { ...FullType }`).join(' ')} } } ${FULL_TYPE}`;
    for (const query of [nested, '{ __type(name: "Patient") { a: name b: name } }']) {
      const r = await anonymous(app.url, query);
      expect(r.status).toBe(400);
      expect(r.body.errors[0].extensions).toMatchObject({
        code: 'query_too_complex',
        limit: 'introspection_aliases',
        max: 0,
      });
    }
    // One response name is one root: these merge, and `__typename` may be aliased.
    const merged = await anonymous(
      app.url,
      '{ t: __typename __schema { queryType { name } } __schema { mutationType { name } } }',
    );
    expect(merged.status).toBe(200);
    expect(merged.body.data).toEqual({
      t: 'Query',
      __schema: { queryType: { name: 'Query' }, mutationType: { name: 'Mutation' } },
    });
  });

  it('refuses fields, inputFields, interfaces or possibleTypes nested in one another (1 MB otherwise)', async () => {
    for (const [query, nesting] of [
      ['{ __schema { types { fields { type { fields { name } } } } } }', 2],
      ['{ __schema { types { possibleTypes { fields { name } } } } }', 2],
      [
        '{ __type(name: "Patient") { ...F } } fragment F on __Type { fields { type { ofType { fields { type { ofType { fields { name } } } } } } } }',
        3,
      ],
    ] as const) {
      const r = await anonymous(app.url, query);
      expect(r.status, query).toBe(400);
      expect(r.body.errors[0].extensions).toMatchObject({
        code: 'query_too_complex',
        limit: 'introspection_depth',
        max: 1,
        actual: nesting,
      });
    }
  });

  it('leaves a key its aliases, roots and nesting', async () => {
    const nested = await app.gql(
      '{ __type(name: "Patient") { fields { type { fields { name } } } } }',
      {},
      key,
    );
    expect(nested.status).toBe(200);
    const r = await app.gql(
      '{ a: __type(name: "Patient") { name } b: __type(name: "Owner") { name } __schema { queryType { name } } }',
      {},
      key,
    );
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({
      a: { name: 'Patient' },
      b: { name: 'Owner' },
      __schema: { queryType: { name: 'Query' } },
    });
  });
});

describe('answers kept by document', () => {
  it('executes a document once, whoever sends it and however it is sent', async () => {
    // A document of its own (a comment makes another text): nothing kept from other tests.
    const query = `# kept ${Date.now()}\n${GRAPHIQL}`;
    const { executed, hits } = introspectionCacheStats;
    const first = await anonymous(app.url, query);
    expect(first.status).toBe(200);
    expect(first.body.data.__schema.types.length).toBeGreaterThan(100);
    expect(introspectionCacheStats).toMatchObject({ executed: executed + 1, hits });
    // Again, as GraphiQL's fetcher sends it (Yoga's path), over GET, and with a key.
    const again = await anonymous(app.url, query);
    const graphiql = await anonymous(app.url, query, {
      accept: 'application/graphql-response+json, application/json',
    });
    const get = await fetch(`${app.url}/graphql?query=${encodeURIComponent(query)}`, {
      headers: { accept: 'application/json' },
    });
    const keyed = await anonymous(app.url, query, { authorization: `Bearer ${key}` });
    expect(introspectionCacheStats).toMatchObject({ executed: executed + 1, hits: hits + 4 });
    expect(again.text).toBe(first.text);
    expect(graphiql.status).toBe(200);
    expect(graphiql.body).toEqual(first.body);
    expect(get.status).toBe(200);
    expect(await get.json()).toEqual(first.body);
    expect(keyed.body).toEqual(first.body);
    // Other variables are another answer.
    const typeQuery = `# kept ${Date.now()}\nquery ($name: String!) { __type(name: $name) { name } }`;
    const ofType = async (name: string) =>
      (
        await fetch(`${app.url}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query: typeQuery, variables: { name } }),
        })
      ).json();
    expect(await ofType('Patient')).toEqual({ data: { __type: { name: 'Patient' } } });
    expect(await ofType('Owner')).toEqual({ data: { __type: { name: 'Owner' } } });
    expect(await ofType('Patient')).toEqual({ data: { __type: { name: 'Patient' } } });
    expect(introspectionCacheStats).toMatchObject({ executed: executed + 3, hits: hits + 5 });
  });
});

describe("the address's budget of bytes", () => {
  it('refuses an address looping full introspection within the budget it is documented to have', async () => {
    const own = await startTestApp();
    const budget = defaultLimits.anonymousBytesPerWindow;
    const { key: ownKey } = await own.clinicWithKey('dental', ['patients:read']);
    let sent = 0;
    let answers = 0;
    let refused: Awaited<ReturnType<typeof anonymous>> | undefined;
    // Never more answers than the budget holds, plus the one that crossed it.
    const size = Buffer.byteLength((await anonymous(own.url, GRAPHIQL)).text);
    sent += size;
    answers++;
    const bound = Math.floor(budget / size) + 1;
    for (let i = 0; i <= bound; i++) {
      const r = await anonymous(own.url, GRAPHIQL);
      if (r.status !== 200) {
        refused = r;
        break;
      }
      sent += Buffer.byteLength(r.text);
      answers++;
      expect(Number(r.headers.get('ratelimit-remaining'))).toBe(Math.max(0, budget - sent));
    }
    expect(refused?.status).toBe(429);
    expect(answers).toBeLessThanOrEqual(bound);
    expect(answers).toBeGreaterThanOrEqual(bound - 1);
    expect(refused?.body.errors[0].extensions.code).toBe('rate_limited');
    expect(Number(refused?.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused?.headers.get('ratelimit-limit')).toBe(String(budget));
    // Kept answers count as fresh ones: the budget counts what is sent. A key is served.
    expect((await anonymous(own.url, '{ __typename }')).status).toBe(429);
    expect((await own.gql('{ __typename }', {}, ownKey)).status).toBe(200);
  });

  it('charges a new answer before it is made: many at once from one address do not pass a budget not yet spent', async () => {
    const own = await startTestApp();
    const { executed } = introspectionCacheStats;
    const statuses = await Promise.all(
      Array.from(
        { length: 8 },
        async (_, i) => (await anonymous(own.url, `# at once ${i} ${Date.now()}\n${GRAPHIQL}`)).status,
      ),
    );
    // 512 KiB charged ahead for each new __schema answer: two fit in the default 1 MiB.
    expect(statuses.filter((s) => s === 200)).toHaveLength(2);
    expect(statuses.filter((s) => s === 429)).toHaveLength(6);
    expect(introspectionCacheStats.executed - executed).toBe(2);
  });
});
