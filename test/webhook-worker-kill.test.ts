import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.ts';
import { type Receiver, startReceiver } from './webhook-receiver.ts';
import { startWorkerProcess, waitUntil } from './worker-process.ts';

/**
 * A worker process (`npm run worker`, a real child process) killed with SIGKILL in the middle of
 * a delivery loses nothing (issue 17): its job stops heartbeating, pg-boss gives it back, and
 * another worker delivers it. Heartbeat and supervision are lowered for the test (10 s and 1 s;
 * the defaults, 30 s and 60 s, give a job back within about 100 s).
 */
let app: TestApp & { databaseUrl: string };
let receiver: Receiver;
const children: ChildProcess[] = [];

beforeAll(async () => {
  app = await startTestApp({ workers: false });
  receiver = await startReceiver();
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  await receiver.close();
});

// Heartbeat and supervision lowered, and no attempt timed out while the receiver hangs.
const startWorker = () =>
  startWorkerProcess(app.databaseUrl, children, {
    QUEUE_SUPERVISE_SECONDS: '1',
    DELIVERY_HEARTBEAT_SECONDS: '10',
    WEBHOOK_TIMEOUT_MS: '120000',
  });

it('a worker killed mid-delivery loses nothing: another delivers the job', { timeout: 90_000 }, async () => {
  const key = (await app.clinicWithKey('dental', ['webhooks:manage', 'patients:write'])).key;
  const first = await startWorker();
  const sub = await app.post('/v1/webhooks', { url: receiver.url, event_types: ['patient.created'] }, key);
  expect(sub.status).toBe(201);
  receiver.secret = sub.body.data.secret;
  receiver.mode.hang = true;
  expect((await app.post('/v1/patients', { first_name: 'Kim', last_name: 'Killed' }, key)).status).toBe(201);
  await waitUntil(() => receiver.hits === 1, 10_000, 'the first worker to take the job');
  first.kill('SIGKILL');
  await new Promise((r) => first.once('exit', r));
  receiver.mode.hang = false;
  await startWorker();
  await receiver.waitFor(1, 60_000);
  expect(receiver.accepted[0].type).toBe('patient.created');
  expect(receiver.accepted[0].body.data.last_name).toBe('Killed');
  // The attempt is logged once the receiver has answered.
  let log = await app.get(`/v1/webhooks/${sub.body.data.id}/deliveries`, key);
  for (let i = 0; i < 100 && !log.body.data.length; i++) {
    await new Promise((r) => setTimeout(r, 50));
    log = await app.get(`/v1/webhooks/${sub.body.data.id}/deliveries`, key);
  }
  expect(log.body.data.map((d: any) => [d.status, d.attempt])).toEqual([['succeeded', 1]]);
});
