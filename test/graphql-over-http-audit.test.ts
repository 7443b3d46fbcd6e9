import { type AuditFail, type AuditResult, serverAudits } from 'graphql-http';
import { beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * graphql-http's GraphQL-over-HTTP audit (the spec's MUST, SHOULD and MAY, as graphql-http reads
 * them) against a real app on loopback, and the answers around it the audit does not look at:
 * a body that is not UTF-8, a 401 in the media type the client asked for.
 *
 * With a key every audit passes, MAY included. Without one, the service answers 401 before it
 * parses anything that is not introspection (src/server/introspection.ts): the audits' documents
 * (`{ __typename }` with variables, broken JSON, a missing query) get that 401, so only the MUSTs
 * are required of them, and every audit that fails anonymously fails on that 401 and nothing else.
 */
let app: TestApp;
let key: string;

beforeAll(async () => {
  app = await startTestApp();
  key = (await app.clinicWithKey('dental', ['patients:read'])).key;
});

/** fetch with the key in Authorization, whatever headers the audit sets. */
const withKey = (input: RequestInfo | URL, init: RequestInit = {}) => {
  const headers = new Headers(init.headers);
  headers.set('authorization', `Bearer ${key}`);
  return fetch(input, { ...init, headers });
};

async function audit(fetchFn: typeof fetch): Promise<AuditResult[]> {
  const results: AuditResult[] = [];
  // One at a time: the audits are small, and a failure's response is read in order.
  for (const a of serverAudits({ url: `${app.url}/graphql`, fetchFn })) results.push(await a.fn());
  return results;
}

const describeFailure = async (r: AuditResult) =>
  r.status === 'ok'
    ? ''
    : `${r.name}: ${r.reason} (HTTP ${r.response.status}, ${r.response.headers.get('content-type')}) ${(await r.response.clone().text()).slice(0, 200)}`;

describe('graphql-http server audits', () => {
  it('pass with a key: no MUST, SHOULD or MAY fails', async () => {
    const results = await audit(withKey as typeof fetch);
    expect(results.length).toBeGreaterThan(30);
    const failed = await Promise.all(results.filter((r) => r.status !== 'ok').map(describeFailure));
    expect(failed).toEqual([]);
  });

  it('without a key: every MUST passes, and what fails fails on the 401 a keyless request gets', async () => {
    const results = await audit(fetch);
    const must = await Promise.all(
      results.filter((r) => r.name.startsWith('MUST') && r.status !== 'ok').map(describeFailure),
    );
    expect(must).toEqual([]);
    const otherwise = results.filter((r): r is AuditFail => r.status !== 'ok');
    for (const r of otherwise) {
      expect(r.response.status, await describeFailure(r)).toBe(401);
      const body = await r.response.clone().json();
      expect(body.errors[0].extensions.code).toBe('unauthenticated');
    }
  });
});

describe('answers the audit does not check', () => {
  const post = (body: BodyInit, headers: Record<string, string>) =>
    fetch(`${app.url}/graphql`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', ...headers },
    });

  it('a body that is not UTF-8 or not JSON is a 400 under Accept: application/json', async () => {
    for (const body of [Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), '{"query": "{ __typename }"', '']) {
      const res = await post(body, { authorization: `Bearer ${key}`, accept: 'application/json' });
      expect(res.status, String(body)).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect((await res.json()).errors[0].extensions.code).toBe('invalid_request');
    }
  });

  it('a 401 is answered in application/graphql-response+json to a client that asks for it first', async () => {
    // Apollo Client 4's Accept; graphql-http's client sends the same order.
    const accept = 'application/graphql-response+json,application/json;q=0.9';
    for (const authorization of [undefined, 'Bearer cg_test_not-a-key']) {
      const res = await post(JSON.stringify({ query: '{ patients(first: 1) { edges { cursor } } }' }), {
        accept,
        ...(authorization ? { authorization } : {}),
      });
      expect(res.status).toBe(401);
      expect(res.headers.get('content-type')).toBe('application/graphql-response+json; charset=utf-8');
      expect((await res.json()).errors[0].extensions.code).toBe('unauthenticated');
    }
    // A client that names application/json first keeps it.
    const plain = await post(JSON.stringify({ query: '{ patients(first: 1) { edges { cursor } } }' }), {
      accept: 'application/json, application/graphql-response+json',
    });
    expect(plain.status).toBe(401);
    expect(plain.headers.get('content-type')).toBe('application/json; charset=utf-8');
  });
});
