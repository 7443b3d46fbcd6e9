import { setTimeout as sleep } from 'node:timers/promises';
import { getIntrospectionQuery } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import type { RateLimiter } from '../src/auth/rate-limit.ts';
import { introspectionCacheKey, introspectionCacheStats } from '../src/server/introspection-cache.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * The guards of introspection without a key, as an independent review of issue 34 found them
 * wanting (docs/security.md, "Without a key"): what runs is exactly what was checked (a
 * form-encoded body ran another document), IPv6 addresses share a budget per /64, new answers
 * made at once are capped and the same one is made once, a refund never lands in the next window,
 * the cache's keys are bounded, and a 401's media type follows the Accept header's q-values.
 */
let app: TestApp;

beforeAll(async () => {
  app = await startTestApp({ limits: { anonymousBytesPerWindow: 64 << 20 } });
});

const GRAPHIQL = getIntrospectionQuery({ schemaDescription: true, inputValueDeprecation: true });
const FIVE_ROOTS = `{ ${Array.from({ length: 5 }, (_, i) => `s${i}: __schema { types { name } }`).join(' ')} }`;

async function post(url: string, body: string, headers: Record<string, string>) {
  const r = await fetch(`${url}/graphql`, { method: 'POST', headers, body });
  const text = await r.text();
  let parsed: any = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  return { status: r.status, text, body: parsed, headers: r.headers };
}

/** The limiter of an app, to slow it down or watch it (the requests read it from here each time). */
const limiterOf = (a: TestApp): RateLimiter => (a.server.app.runner.deps as any).rateLimiter;

describe('what runs without a key is what was checked', () => {
  it('refuses a body that is not application/json with 401, executing nothing (a form body ran another document)', async () => {
    const smuggled = (document: string) =>
      JSON.stringify({ query: '{ __typename }', x: `&query=${encodeURIComponent(document)}#` });
    const cases: [string, string][] = [
      ['application/x-www-form-urlencoded', smuggled(FIVE_ROOTS)],
      ['application/x-www-form-urlencoded', smuggled('mutation { __typename }')],
      ['application/x-www-form-urlencoded; charset=utf-8', smuggled('{ __typename }')],
      ['application/graphql', JSON.stringify({ query: '{ __typename }' })],
      ['application/graphql+json', JSON.stringify({ query: '{ __typename }' })],
      ['multipart/form-data; boundary=x', JSON.stringify({ query: '{ __typename }' })],
      ['text/plain', JSON.stringify({ query: '{ __typename }' })],
      ['application/json, application/x-www-form-urlencoded', smuggled('{ __typename }')],
      ['application/jsonx', JSON.stringify({ query: '{ __typename }' })],
    ];
    for (const [type, body] of cases) {
      const { executed, hits } = introspectionCacheStats;
      const r = await post(app.url, body, { 'content-type': type });
      expect(r.status, type).toBe(401);
      expect(r.body.data, type).toBeUndefined();
      expect(r.body.errors[0].extensions.code, type).toBe('unauthenticated');
      // Nothing executed, nothing served from the cache.
      expect(introspectionCacheStats, type).toMatchObject({ executed, hits });
    }
  });

  it('still answers the JSON forms GraphiQL and clients send, and runs the checked params only', async () => {
    for (const type of [
      'application/json',
      'application/json; charset=utf-8',
      'Application/JSON;charset="UTF-8"',
    ]) {
      const r = await post(app.url, JSON.stringify({ query: '{ __typename }' }), { 'content-type': type });
      expect(r.status, type).toBe(200);
      expect(r.body).toEqual({ data: { __typename: 'Query' } });
    }
    // GraphiQL's fetcher (Yoga's path), with an operation name and variables.
    const r = await post(
      app.url,
      JSON.stringify({
        query: 'query T($n: String!) { __type(name: $n) { name } } query U { __typename }',
        operationName: 'T',
        variables: { n: 'Patient' },
      }),
      { 'content-type': 'application/json', accept: 'application/graphql-response+json, application/json' },
    );
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ data: { __type: { name: 'Patient' } } });
    // A URL's query string does not stand in for the body's document.
    const url = await fetch(`${app.url}/graphql?query=${encodeURIComponent('mutation { __typename }')}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(url.status).toBe(200);
    expect(await url.json()).toEqual({ data: { __typename: 'Query' } });
    // GET runs the first `query` it was checked with, never a second one.
    const get = await fetch(
      `${app.url}/graphql?query=${encodeURIComponent('{ __typename }')}&query=${encodeURIComponent(FIVE_ROOTS)}`,
      { headers: { accept: 'application/json' } },
    );
    expect(get.status).toBe(200);
    expect(await get.json()).toEqual({ data: { __typename: 'Query' } });
  });
});

describe('budgets and executions', () => {
  it('charges every IPv6 address of one /64 from one budget; another /64 and IPv4 addresses have their own', async () => {
    const proxied = await startTestApp({ trustProxy: '127.0.0.1/8' });
    const from = (address: string) =>
      post(proxied.url, JSON.stringify({ query: GRAPHIQL }), {
        'content-type': 'application/json',
        'x-forwarded-for': address,
      });
    // About 360 KB an answer, 1 MiB per window: the third from one /64 is a 429.
    const statuses: number[] = [];
    for (let i = 1; i <= 4; i++) statuses.push((await from(`2001:db8:1:2::${i.toString(16)}`)).status);
    expect(statuses).toEqual([200, 200, 429, 429]);
    expect((await from('2001:db8:1:2:ffff:ffff:ffff:ffff')).status).toBe(429);
    expect((await from('2001:db8:1:3::1')).status).toBe(200);
    for (let i = 1; i <= 4; i++) expect((await from(`203.0.113.${i}`)).status).toBe(200);
  });

  it('makes at most two new answers without a key at once: the rest get 429 with Retry-After 1', async () => {
    const slow = await startTestApp({ limits: { anonymousBytesPerWindow: 64 << 20 } });
    const limiter = limiterOf(slow);
    const spend = limiter.spendAnonymous.bind(limiter);
    // Each charge takes a while: new answers overlap as they would under a slow database.
    limiter.spendAnonymous = async (...args) => {
      await sleep(300);
      return spend(...args);
    };
    const { executed } = introspectionCacheStats;
    const stamp = Date.now();
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        post(slow.url, JSON.stringify({ query: `# at once ${i} ${stamp}\n${GRAPHIQL}` }), {
          'content-type': 'application/json',
        }),
      ),
    );
    const ok = answers.filter((r) => r.status === 200);
    const busy = answers.filter((r) => r.status === 429);
    expect(ok).toHaveLength(2);
    expect(busy).toHaveLength(4);
    for (const r of busy) {
      expect(r.headers.get('retry-after')).toBe('1');
      expect(r.body.errors[0].extensions.code).toBe('rate_limited');
      expect(r.body.data).toBeUndefined();
    }
    expect(introspectionCacheStats.executed - executed).toBe(2);
    // Once they are made, the next new one is served.
    const later = await post(slow.url, JSON.stringify({ query: `# later ${stamp}\n${GRAPHIQL}` }), {
      'content-type': 'application/json',
    });
    expect(later.status).toBe(200);
    // A key is not capped (its points bound it).
    const { key } = await slow.clinicWithKey('dental', ['patients:read']);
    const keyed = await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        post(slow.url, JSON.stringify({ query: `# keyed ${i} ${stamp}\n${GRAPHIQL}` }), {
          'content-type': 'application/json',
          authorization: `Bearer ${key}`,
        }),
      ),
    );
    expect(keyed.map((r) => r.status)).toEqual([200, 200, 200, 200]);
  });

  it('makes an answer asked for by many at once once: they share it', async () => {
    const slow = await startTestApp({ limits: { anonymousBytesPerWindow: 64 << 20 } });
    const limiter = limiterOf(slow);
    const spend = limiter.spendAnonymous.bind(limiter);
    limiter.spendAnonymous = async (...args) => {
      await sleep(200);
      return spend(...args);
    };
    const { executed, hits } = introspectionCacheStats;
    const query = `# shared ${Date.now()}\n${GRAPHIQL}`;
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        post(slow.url, JSON.stringify({ query }), { 'content-type': 'application/json' }),
      ),
    );
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    for (const r of answers) expect(r.text).toBe(answers[0].text);
    expect(introspectionCacheStats.executed - executed).toBe(1);
    expect(introspectionCacheStats.hits - hits).toBe(5);
  });

  it("gives back what a new answer did not use only within the window it was charged in (never to the next one's credit)", async () => {
    const short = await startTestApp({ limits: { rateLimitWindowSeconds: 1 } });
    const budget = 1 << 20;
    const limiter = limiterOf(short);
    const spend = limiter.spendAnonymous.bind(limiter);
    // The answer is settled after the window of its charge has ended.
    limiter.spendAnonymous = async (address, bytes, setHeader, after, ...rest) => {
      if (after) await sleep(1300);
      return spend(address, bytes, setHeader, after, ...rest);
    };
    const small = await post(
      short.url,
      JSON.stringify({ query: `# ${Date.now()}\n{ __schema { queryType { name } } }` }),
      {
        'content-type': 'application/json',
      },
    );
    expect(small.status).toBe(200);
    // The next window is charged what its requests cost, from a full budget and no more.
    limiter.spendAnonymous = spend;
    const next = await post(short.url, JSON.stringify({ query: '{ __typename }' }), {
      'content-type': 'application/json',
    });
    expect(next.status).toBe(200);
    expect(Number(next.headers.get('ratelimit-remaining'))).toBe(budget - 1024);
  });
});

describe('bounded keys, negotiated answers', () => {
  it('keys the cache on a hash, whatever the size of the variables', () => {
    const big = { name: 'Patient', pad: 'x'.repeat(60_000) };
    const key = introspectionCacheKey(1, 'T', big);
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect(introspectionCacheKey(1, 'T', { ...big, pad: 'y'.repeat(60_000) })).not.toBe(key);
    expect(introspectionCacheKey(2, 'T', big)).not.toBe(key);
    expect(introspectionCacheKey(1, 'U', big)).not.toBe(key);
    expect(introspectionCacheKey(1, undefined, {})).not.toBe(introspectionCacheKey(1, '', {}));
  });

  it("answers a 401 in the media type the Accept header's q-values prefer", async () => {
    const cases: [string, string][] = [
      ['application/json;q=0.1, application/graphql-response+json', 'application/graphql-response+json'],
      ['application/graphql-response+json;q=0.5, application/json', 'application/json'],
      ['application/graphql-response+json, application/json', 'application/graphql-response+json'],
      ['application/json, application/graphql-response+json', 'application/json'],
      ['*/*;q=0.2, application/graphql-response+json;q=0.3', 'application/graphql-response+json'],
      ['application/graphql-response+json;q=0, */*', 'application/json'],
      ['application/*;q=0.9, application/graphql-response+json', 'application/graphql-response+json'],
      ['*/*', 'application/json'],
      ['', 'application/json'],
    ];
    for (const [accept, type] of cases) {
      const r = await post(app.url, JSON.stringify({ query: '{ patients { edges { cursor } } }' }), {
        'content-type': 'application/json',
        ...(accept ? { accept } : {}),
      });
      expect(r.status, accept).toBe(401);
      expect(r.headers.get('content-type'), accept).toMatch(new RegExp(`^${type.replace(/[+]/g, '\\+')}`));
    }
  });
});
