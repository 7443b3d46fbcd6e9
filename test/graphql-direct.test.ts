import { request as httpRequest } from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { readScopes } from '../src/auth/scopes.ts';
import { fixtures } from './fixtures.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * /graphql answers the everyday request (POST, JSON, answered as JSON) on a direct path and
 * everything else through Yoga (src/server/graphql.ts). Each request here is sent both ways: once
 * with a Content-Length (direct when eligible) and once chunked (always Yoga). Status, media type
 * and body must be the same, request ids aside.
 */
let app: TestApp;
let key: string;
let patientsOnlyKey: string;

beforeAll(async () => {
  app = await startTestApp();
  const c = await app.clinicWithKey('veterinary', readScopes);
  key = c.key;
  patientsOnlyKey = await app.key(c.clinicId, ['patients:read']);
  const f = fixtures(app.orm, c.clinicId);
  const cat = await f.catalog();
  const owner = await f.owner({ first: 'Noa', last: 'Levi', phone: '054-123-0000' });
  const rex = await f.patient({
    first: 'Rex',
    last: 'Levi',
    phone: '054-123-0000',
    owner,
    species: cat.species,
  });
  for (let i = 0; i < 3; i++) await f.appointment(rex, { branch: cat.branch, status: cat.status }, i * 60);
});

interface Sent {
  status: number;
  type: string | undefined;
  body: unknown;
}

function send(body: string, headers: Record<string, string>, chunked: boolean): Promise<Sent> {
  const url = new URL(`${app.url}/graphql`);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: '/graphql',
        method: 'POST',
        headers: chunked ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          text += c;
        });
        res.on('end', () => {
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {}
          resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], body: parsed });
        });
      },
    );
    req.on('error', reject);
    // Two writes without a Content-Length: Node sends the body chunked.
    if (chunked) req.write(body.slice(0, 1));
    req.end(chunked ? body.slice(1) : body);
  });
}

/** Request ids differ between any two requests; everything else must not. */
const withoutRequestIds = (v: unknown): unknown =>
  JSON.parse(JSON.stringify(v), (k, x) => (k === 'request_id' ? 'req_*' : x));

async function bothWays(body: string, headers: Record<string, string> = {}) {
  const h = { 'content-type': 'application/json', authorization: `Bearer ${key}`, ...headers };
  const before = app.server.app.graphql.stats.direct;
  const direct = await send(body, h, false);
  const tookDirect = app.server.app.graphql.stats.direct > before;
  const yoga = await send(body, h, true);
  expect(app.server.app.graphql.stats.direct - before).toBe(tookDirect ? 1 : 0);
  expect(withoutRequestIds(direct)).toEqual(withoutRequestIds(yoga));
  return { ...direct, tookDirect };
}

const PAGE =
  '{ patients(first: 2) { edges { node { id firstName owner { firstName } species { name } appointments(first: 2) { edges { node { id start status { name } } } } } } } }';

describe('/graphql direct path', () => {
  it('answers a query directly, exactly as Yoga does', async () => {
    const r = await bothWays(JSON.stringify({ query: PAGE }));
    expect(r.tookDirect).toBe(true);
    expect(r.status).toBe(200);
    expect(r.type).toBe('application/json; charset=utf-8');
    const node = (r.body as any).data.patients.edges[0].node;
    expect(node).toMatchObject({ firstName: 'Rex', owner: { firstName: 'Noa' }, species: { name: 'Dog' } });
    expect(node.appointments.edges).toHaveLength(2);
  });

  it('takes variables and an operation name', async () => {
    const query =
      'query A($n: Int) { patients(first: $n) { edges { node { firstName } } } } query B { patient(id: "pat_0") { id } }';
    const r = await bothWays(JSON.stringify({ query, variables: { n: 1 }, operationName: 'A' }));
    expect(r.tookDirect).toBe(true);
    expect((r.body as any).data.patients.edges).toEqual([{ node: { firstName: 'Rex' } }]);
    const b = await bothWays(JSON.stringify({ query, variables: null, operationName: 'B' }));
    expect(b.body).toEqual({ data: { patient: null } });
  });

  it('answers execution errors, missing scopes and bad variables the same way', async () => {
    const bad = await bothWays(JSON.stringify({ query: '{ patients(first: 0) { edges { cursor } } }' }));
    expect(bad.tookDirect).toBe(true);
    expect(bad.status).toBe(200);
    expect((bad.body as any).errors[0].extensions.code).toBe('validation_failed');
    const scope = await bothWays(JSON.stringify({ query: PAGE }), {
      authorization: `Bearer ${patientsOnlyKey}`,
    });
    expect(scope.tookDirect).toBe(true);
    expect((scope.body as any).errors[0].extensions.code).toBe('forbidden');
    const vars = await bothWays(
      JSON.stringify({
        query: 'query($n: Int) { patients(first: $n) { edges { cursor } } }',
        variables: { n: 'x' },
      }),
    );
    expect(vars.tookDirect).toBe(true);
    expect(vars.status).toBe(200);
    expect((vars.body as any).errors[0].extensions.code).toBe('invalid_request');
    expect((vars.body as any).data).toBeUndefined();
  });

  it('answers a missing or unknown key with 401 and no http internals, before either path', async () => {
    for (const authorization of ['', 'Bearer cg_live_nope']) {
      const r = await bothWays(JSON.stringify({ query: PAGE }), { authorization });
      expect(r.tookDirect).toBe(false);
      expect(r.status).toBe(401);
      const err = (r.body as any).errors[0];
      expect(err.extensions.code).toBe('unauthenticated');
      expect(err.extensions.http).toBeUndefined();
    }
  });

  it('hands documents, bodies and media types it does not handle to Yoga', async () => {
    const cases: [string, Record<string, string>][] = [
      ['{ patients(first: 1) { edges { node { nope } } } }', {}],
      ['{ patients(', {}],
      ['{"query": ', {}],
      ['[{"query":"{ __typename }"}]', {}],
      ['{"query":"{ __typename }","extensions":{}}', {}],
      ['{"query":42}', {}],
      ['{"query":"{ __typename }"}', { accept: 'application/graphql-response+json' }],
    ];
    for (const [raw, headers] of cases) {
      const body = raw.startsWith('{') || raw.startsWith('[') ? raw : JSON.stringify({ query: raw });
      const r = await bothWays(body, headers);
      expect(r.tookDirect, body).toBe(false);
    }
    const invalid = await bothWays(
      JSON.stringify({ query: '{ patients(first: 1) { edges { node { nope } } } }' }),
    );
    // Yoga answers application/json requests with 200 even for an invalid document.
    expect(invalid.status).toBe(200);
    expect((invalid.body as any).errors[0].extensions.code).toBe('invalid_request');
  });
});
