import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.ts';
import { until } from './until.ts';
import { type Receiver, startReceiver } from './webhook-receiver.ts';
import { startWorkerProcess } from './worker-process.ts';

/**
 * The URL policy is the subscription's clinic's in every process (docs/test-mode.md), not a
 * setting of the one that created it: `npm run worker` (a real child process, no setting of its
 * own) delivers a test clinic's event to a loopback receiver and refuses a live clinic's.
 */
let app: TestApp & { databaseUrl: string };
let testReceiver: Receiver;
let liveReceiver: Receiver;
const children: ChildProcess[] = [];

beforeAll(async () => {
  // The service queues deliveries and attempts none: the worker process makes every attempt.
  app = await startTestApp({ deliveryWorkers: false });
  testReceiver = await startReceiver();
  liveReceiver = await startReceiver();
  await startWorkerProcess(app.databaseUrl, children);
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  await testReceiver.close();
  await liveReceiver.close();
});

it("a worker process delivers a test clinic's loopback receiver and refuses a live clinic's", {
  timeout: 60_000,
}, async () => {
  const scopes = ['webhooks:manage', 'patients:write'];
  const test = await app.clinicWithKey('dental', scopes, 'Test clinic', { mode: 'test' });
  const live = await app.clinicWithKey('dental', scopes, 'Live clinic', { mode: 'live' });
  const t = await app.post(
    '/v1/webhooks',
    { url: testReceiver.url, event_types: ['patient.created'] },
    test.key,
  );
  expect(t.status, JSON.stringify(t.body)).toBe(201);
  testReceiver.secret = t.body.data.secret;
  const l = await app.post(
    '/v1/webhooks',
    { url: 'https://93.184.215.14/hooks', event_types: ['patient.created'] },
    live.key,
  );
  expect(l.status, JSON.stringify(l.body)).toBe(201);
  // Pointed at loopback behind the API's back: only the attempt's own check stands in the way.
  await app.orm.em
    .fork()
    .getConnection()
    .execute('update "webhook_subscription" set "url" = ? where "id" = ?', [
      liveReceiver.url,
      Number(l.body.data.id.slice(3)),
    ]);
  for (const key of [test.key, live.key])
    expect((await app.post('/v1/patients', { first_name: 'Wren', last_name: 'Worker' }, key)).status).toBe(
      201,
    );
  await testReceiver.waitFor(1, 30_000);
  expect(testReceiver.accepted[0].body.data.last_name).toBe('Worker');
  const [attempt] = await until(
    async () => (await app.get(`/v1/webhooks/${l.body.data.id}/deliveries`, live.key)).body.data as any[],
    (log) => log.length > 0,
    30_000,
  );
  expect(attempt).toMatchObject({ status: 'failed', response_status: null });
  expect(attempt.error).toMatch(/allowed for test clinics only/);
  expect(liveReceiver.hits).toBe(0);
});
