import type { ExecutionResult } from 'graphql';
import { beforeAll, expect, it } from 'vitest';
import { clockNow, currentRequest, type RequestInfo } from '../src/lib/request-context.ts';
import type { OperationRunner, PreparedRun } from '../src/server/runner.ts';
import { fixtures } from './fixtures.ts';
import { startTestApp, type TestApp } from './helpers.ts';
import { connect, until } from './ws-client.ts';

/**
 * The one operation runner (src/server/runner.ts): an operation runs with a credential, a
 * deadline and a budget whatever carries it, HTTP or nothing at all (no HTTP request around it),
 * with the same limits and the same cost; the job workers run in its system scope.
 */
let app: TestApp;
let runner: OperationRunner;
let clinicId: number;
const BUDGET = 10_000;
const PAGE = '{ patients(first: 3) { edges { node { id lastName } } } }';

beforeAll(async () => {
  app = await startTestApp({ limits: { rateLimitPoints: BUDGET, rateLimitWindowSeconds: 600 } });
  runner = app.server.app.runner;
  ({ clinicId } = await app.clinicWithKey('dental', ['patients:read']));
  const f = fixtures(app.orm, clinicId);
  for (const last of ['Levi', 'Cohen']) await f.patient({ first: 'Dana', last });
});

/** Runs one document through the runner alone, as a transport would, and reports its headers. */
async function runAlone(key: string, query: string) {
  const headers = new Map<string, string>();
  const info = runner.begin({ clientAddress: 'test', setHeader: (n, v) => headers.set(n.toLowerCase(), v) });
  const ctx = await runner.authenticate(info, `Bearer ${key}`, false);
  const prepared = await runner.prepare(ctx, { query }, 5000);
  if (!('run' in prepared)) return { errors: prepared, headers };
  const result = (await (prepared as PreparedRun).run()) as ExecutionResult;
  return { ...result, headers };
}

const spent = (remaining: string | null | undefined) => BUDGET - Number(remaining);

it('runs an operation with no HTTP request around it, spending what HTTP spends', async () => {
  expect(currentRequest()).toBeUndefined();
  const alone = await runAlone(await app.key(clinicId, ['patients:read']), PAGE);
  expect(alone.errors).toBeUndefined();
  expect((alone.data as any).patients.edges.map((e: any) => e.node.lastName).sort()).toEqual([
    'Cohen',
    'Levi',
  ]);
  const http = await app.gql(PAGE, {}, await app.key(clinicId, ['patients:read']));
  expect(http.status).toBe(200);
  expect(http.body.data).toEqual(alone.data);
  expect(spent(alone.headers.get('ratelimit-remaining'))).toBeGreaterThan(1);
  expect(spent(alone.headers.get('ratelimit-remaining'))).toBe(
    spent(http.headers.get('ratelimit-remaining')),
  );
});

it('refuses a credential, and applies the depth and cost limits, as HTTP does', async () => {
  const info = runner.begin({ clientAddress: 'test' });
  await expect(runner.authenticate(info, 'Bearer sk_nope', false)).rejects.toMatchObject({
    code: 'unauthenticated',
  });
  const key = await app.key(clinicId, ['patients:read', 'appointments:read']);
  let nested = 'id';
  for (let i = 0; i < 10; i++) nested = `patient { ${nested} } id`;
  const deep = `{ patients(first: 1) { edges { node { appointments(first: 1) { edges { node { ${nested} } } } } } } }`;
  const heavy =
    'patients(first: 100) { edges { node { id firstName appointments(first: 100) { edges { node { id start status { name } } } } } } }';
  const costly = `{ a: ${heavy} b: ${heavy} }`;
  for (const query of [deep, costly]) {
    const alone = await runAlone(key, query);
    const http = await app.gql(query, {}, key);
    const code = (alone.errors as any)?.[0]?.extensions?.code;
    expect(code, query).toBe('query_too_complex');
    expect(http.body.errors[0].extensions.code, query).toBe(code);
    expect(http.body.errors[0].extensions.limit ?? null, query).toBe(
      (alone.errors as any)[0].extensions.limit ?? null,
    );
  }
});

it('refuses a subscription outside a streaming transport, over HTTP and alone', async () => {
  const key = await app.key(clinicId, ['patients:read']);
  const query = 'subscription { events { id } }';
  const alone = await runAlone(key, query);
  expect((alone.errors as any)[0].extensions.code).toBe('invalid_request');
  const http = await app.gql(query, {}, key);
  expect(http.body.errors[0].extensions.code).toBe('invalid_request');
  expect(http.body.errors[0].message).toBe((alone.errors as any)[0].message);
});

it('answers a websocket operation refused at authentication with its own request id', async () => {
  const key = await app.key(clinicId, ['webhooks:manage']);
  const socket = connect(app.url, { Authorization: `Bearer ${key}` });
  try {
    await socket.connected;
    // Revoked behind the service's back (no change announced): the socket stays open, and its
    // next operation is refused when it authenticates again.
    await app.orm.em
      .getConnection()
      .execute(
        `update api_key set revoked_at = now() where hash = encode(sha256(convert_to(?, 'UTF8')), 'hex')`,
        [key],
      );
    const refused = socket.subscribe('subscription { events { id } }');
    await until(() => refused.errors.length > 0);
    expect(refused.errors[0].extensions.code).toBe('unauthenticated');
    expect(refused.errors[0].extensions.request_id).toMatch(/^req_/);
    expect(refused.errors[0].extensions.request_id).not.toBe('req_unknown');
  } finally {
    await socket.dispose();
  }
});

it('runs the job workers in its system scope: the injected clock, no request, no credential', async () => {
  const queue = app.server.jobs.queue;
  await queue.boss.createQueue('runner-scope-test');
  let seen: { info: RequestInfo | undefined; now: Date } | undefined;
  const done = new Promise<void>((resolve) => {
    void queue.work([
      {
        queue: 'runner-scope-test',
        options: { batchSize: 1, pollingIntervalSeconds: 0.5 },
        handler: async () => {
          seen = { info: currentRequest(), now: clockNow() };
          resolve();
        },
      },
    ]);
  });
  await queue.boss.send('runner-scope-test', {});
  await done;
  await queue.boss.offWork('runner-scope-test');
  expect(seen?.info?.clientAddress).toBe('system');
  expect(seen?.info && 'principal' in seen.info).toBe(false);
  expect(seen?.now.toISOString()).toBe(app.clock.now().toISOString());
});
