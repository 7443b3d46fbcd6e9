import { getIntrospectionQuery } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * The GraphQL console over HTTP (test/browser.test.ts drives it in Chromium): a small page,
 * its assets cacheable for good under hashed names, and introspection without a key, within the
 * limits and the address's rate-limit budget.
 */
let app: TestApp;
let key: string;

beforeAll(async () => {
  app = await startTestApp({ limits: { rateLimitPoints: 2_000 } });
  ({ key } = await app.clinicWithKey('dental', ['patients:read']));
});

const html = { accept: 'text/html,application/xhtml+xml' };

/** The page's asset paths (scripts, styles, the icon, the workers named in its options). */
async function consolePage(url = '/graphql') {
  const r = await fetch(`${app.url}${url}`, { headers: html });
  const text = await r.text();
  return { r, text, assets: [...new Set(text.match(/\/graphql\/assets\/[\w.-]+/g) ?? [])] };
}

/** A POST without an Authorization header. */
async function anonymous(query: string) {
  const r = await fetch(`${app.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  });
  return { status: r.status, body: (await r.json()) as any, headers: r.headers };
}

describe('the console page and its assets', () => {
  it('is a small page, revalidated, whose assets are immutable files named by their content', async () => {
    const { r, text, assets } = await consolePage();
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/html/);
    expect(r.headers.get('cache-control')).toBe('no-cache');
    expect(Buffer.byteLength(text)).toBeLessThan(8_000);
    expect(text).toContain('GraphiQL');
    // The stylesheet, the script, three Monaco workers, the icon, graphql-ws's browser build and
    // the console's fetcher (src/server/graphiql-fetcher.js).
    expect(assets).toHaveLength(8);
    for (const path of assets) {
      expect(path).toMatch(/\.[0-9a-f]{16}\.(js|css|ico)$/);
      const plain = await fetch(`${app.url}${path}`, { headers: { 'accept-encoding': 'identity' } });
      expect(plain.status, path).toBe(200);
      expect(plain.headers.get('cache-control'), path).toBe('public, max-age=31536000, immutable');
      expect(plain.headers.get('content-encoding'), path).toBeNull();
      const bytes = Buffer.from(await plain.arrayBuffer());
      expect(bytes.length).toBe(Number(plain.headers.get('content-length')));
      // fetch decompresses: the same bytes, sent gzipped.
      const gzipped = await fetch(`${app.url}${path}`, { headers: { 'accept-encoding': 'gzip' } });
      expect(gzipped.headers.get('content-encoding'), path).toBe('gzip');
      expect(Number(gzipped.headers.get('content-length'))).toBeLessThan(bytes.length);
      expect(Buffer.from(await gzipped.arrayBuffer()).equals(bytes)).toBe(true);
    }
    // The same names on the next request: nothing is renamed but by a new package.
    expect((await consolePage()).assets).toEqual(assets);
  });

  it('is the page for a browser whose address holds a ?query= (GraphiQL keeps it there)', async () => {
    const { r, assets } = await consolePage(`/graphql?query=${encodeURIComponent('{ __typename }')}`);
    expect(r.status).toBe(200);
    expect(assets).toHaveLength(8);
  });

  it('answers an unknown asset with 404, and HEAD without a body', async () => {
    const missing = await fetch(`${app.url}/graphql/assets/graphiql.0000000000000000.js`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('cache-control')).toBe('no-store');
    const [path] = (await consolePage()).assets;
    const head = await fetch(`${app.url}${path}`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });
});

describe('introspection without a key', () => {
  it("answers GraphiQL's introspection query, spending from the address's budget", async () => {
    const r = await anonymous(
      getIntrospectionQuery({ schemaDescription: true, inputValueDeprecation: true }),
    );
    expect(r.status).toBe(200);
    expect(r.body.errors).toBeUndefined();
    const types = r.body.data.__schema.types.map((t: { name: string }) => t.name);
    expect(types).toContain('Patient');
    // The address's budget of bytes per window (docs/limits.md), less this answer's size.
    const budget = 1 << 20;
    expect(r.headers.get('ratelimit-limit')).toBe(String(budget));
    expect(r.headers.get('ratelimit-policy')).toBe(`${budget};w=10`);
    expect(Number(r.headers.get('ratelimit-remaining'))).toBeLessThanOrEqual(
      budget - Buffer.byteLength(JSON.stringify(r.body)),
    );
    const typeQuery = await anonymous(
      'query { __typename ...T } fragment T on Query { __type(name: "Patient") { name } }',
    );
    expect(typeQuery.body).toEqual({ data: { __typename: 'Query', __type: { name: 'Patient' } } });
  });

  it('is refused with 401 for anything else, however it is hidden', async () => {
    for (const query of [
      '{ __typename patients(first: 1) { edges { cursor } } }',
      'query { ...F } fragment F on Query { patients(first: 1) { edges { cursor } } }',
      'query { ... on Query { patient(id: "pat_1") { id } } }',
      'mutation { __typename }',
      'query A { __typename } query B { patients(first: 1) { edges { cursor } } }',
      '{ __typename',
    ]) {
      const r = await anonymous(query);
      expect(r.status, query).toBe(401);
      expect(r.body.errors[0].extensions.code).toBe('unauthenticated');
      expect(r.headers.get('ratelimit-limit')).toBeNull();
    }
    // A malformed header is not the absence of one.
    const placeholder = await app.gql('{ __typename }', {}, '<your API key>');
    expect(placeholder.status).toBe(401);
  });

  it('keeps the limits: depth, aliases, and the size of what is read', async () => {
    let nested = 'name';
    for (let i = 0; i < 14; i++) nested = `ofType { ${nested} }`;
    const deep = await anonymous(`{ __type(name: "Patient") { ${nested} } }`);
    expect(deep.status).toBe(400);
    expect(deep.body.errors[0].extensions).toMatchObject({ code: 'query_too_complex', limit: 'depth' });
    const aliases = Array.from({ length: 40 }, (_, i) => `a${i}: __type(name: "Patient") { name }`).join(' ');
    const many = await anonymous(`{ ${aliases} }`);
    expect(many.status).toBe(400);
    // Stricter without a key than the aliases limit (test/anonymous-introspection.test.ts).
    expect(many.body.errors[0].extensions).toMatchObject({
      code: 'query_too_complex',
      limit: 'introspection_roots',
    });
    // Past 64 KiB, a request without a key is not read further: the 401 of any such request.
    const big = await anonymous(`{ ${'__typename '.repeat(7_000)} }`);
    expect(big.status).toBe(401);
  });

  it("is refused once the address's budget is spent (each answer counts at least 1 KiB); a key's budget is its own", async () => {
    const other = await startTestApp({ limits: { rateLimitPoints: 5, anonymousBytesPerWindow: 5 * 1024 } });
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) {
      const r = await fetch(`${other.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ __typename }' }),
      });
      statuses.push(r.status);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
    const { key: otherKey } = await other.clinicWithKey('dental', ['patients:read']);
    expect((await other.gql('{ __typename }', {}, otherKey)).status).toBe(200);
  });

  it('with a key, introspection is answered as before', async () => {
    const r = await app.gql('{ __type(name: "Patient") { name } }', {}, key);
    expect(r.body).toEqual({ data: { __type: { name: 'Patient' } } });
  });
});
