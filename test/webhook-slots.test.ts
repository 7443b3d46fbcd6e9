import type { ChildProcess } from 'node:child_process';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.ts';
import { type Receiver, startReceiver } from './webhook-receiver.ts';
import { startWorkerProcess, waitUntil } from './worker-process.ts';

/**
 * The per-subscription cap across worker processes, and a dead worker's slots (issue 25): real
 * `npm run worker` processes (src/worker.ts) beside a service that runs none, a real receiver on
 * loopback that counts the requests it holds at once. Heartbeat and supervision keep their
 * defaults (30 s, 60 s): a killed worker's slots must be free long before pg-boss notices it.
 */
let app: TestApp & { databaseUrl: string };
let receiver: Receiver;
const children: ChildProcess[] = [];

beforeAll(async () => {
  app = await startTestApp({ workers: false });
});
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await receiver?.close();
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
});

const startWorker = () => startWorkerProcess(app.databaseUrl, children);

async function subscribed(key: string) {
  const sub = await app.post('/v1/webhooks', { url: receiver.url, event_types: ['patient.created'] }, key);
  expect(sub.status).toBe(201);
  receiver.secret = sub.body.data.secret;
  return sub.body.data.id as string;
}

const createPatients = (key: string, n: number, tag: string) =>
  Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const res = await app.post('/v1/patients', { first_name: `P${i}`, last_name: tag }, key);
      expect(res.status).toBe(201);
    }),
  );

it('two worker processes and a slow receiver: never more than 4 attempts of one subscription at once', {
  timeout: 90_000,
}, async () => {
  receiver = await startReceiver();
  receiver.mode.delayMs = 400;
  const { key } = await app.clinicWithKey('dental', ['webhooks:manage', 'patients:write']);
  await Promise.all([startWorker(), startWorker()]);
  await subscribed(key);
  await createPatients(key, 40, 'Slow');
  await receiver.waitFor(40, 60_000);
  // pg-boss's own group limit let 12–16 through here (one worker process was enough).
  expect(receiver.maxInFlight).toBeLessThanOrEqual(4);
  // And the cap is used: attempts of the subscription did run side by side.
  expect(receiver.maxInFlight).toBeGreaterThanOrEqual(3);
});

it('a worker killed while it holds every slot of a subscription: its next event is delivered within 15 s', {
  timeout: 90_000,
}, async () => {
  receiver = await startReceiver();
  receiver.mode.hang = true;
  const { key } = await app.clinicWithKey('dental', ['webhooks:manage', 'patients:write']);
  const doomed = await startWorker();
  await subscribed(key);
  await createPatients(key, 4, 'Held');
  // The doomed worker holds the subscription's 4 slots with attempts the receiver never answers.
  await waitUntil(() => receiver.inFlight === 4, 20_000, 'four attempts under way');
  const survivor = await startWorker();
  expect(survivor.exitCode).toBeNull();
  doomed.kill('SIGKILL');
  await new Promise((r) => doomed.once('exit', r));
  receiver.mode.hang = false;
  const killedAt = Date.now();
  await createPatients(key, 1, 'Next');
  // Its in-flight attempts come back with pg-boss's heartbeat (about 100 s); the next event must not wait for them.
  await waitUntil(
    () => receiver.accepted.some((a) => a.body.data.last_name === 'Next'),
    15_000,
    'the next event',
  );
  expect(Date.now() - killedAt).toBeLessThan(15_000);
});
