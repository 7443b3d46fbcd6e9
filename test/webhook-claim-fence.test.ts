import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../src/lib/clock.ts';
import { DELIVERY_QUEUE, type DeliveryJob } from '../src/services/webhooks/delivery-jobs.ts';
import { type AttemptDeps, attemptDelivery } from '../src/webhooks/attempt.ts';
import { startTestApp, type TestApp } from './helpers.ts';
import { type Receiver, startReceiver } from './webhook-receiver.ts';

/**
 * An attempt settles its job only while it still holds it (src/webhooks/attempt.ts): when worker
 * A's claim lapsed (heartbeat missed) and pg-boss handed the job to worker B, A's end records
 * nothing and queues nothing, so the attempt is logged once and one retry chain goes on.
 */
let app: TestApp;
let receiver: Receiver;

beforeAll(async () => {
  // No workers: the test is both workers, fetching by hand.
  app = await startTestApp({ workers: false });
  receiver = await startReceiver();
});
afterAll(() => receiver.close());

const sql = (q: string, p: unknown[] = []) => app.orm.em.fork().getConnection().execute<any[]>(q, p);
// The receiver checks the signature's timestamp against its own clock: the system's.
const deps = (): AttemptDeps => ({
  em: app.orm.em,
  clock: systemClock,
  timeoutMs: 1000,
});

interface Fetched {
  id: string;
  retryCount: number;
  data: DeliveryJob;
}

/** A subscription and one event; its job fetched by worker A, lapsed, then fetched by worker B. */
async function handedOver() {
  // A clinic of its own: no other subscription's job to fetch.
  const { key } = await app.clinicWithKey('dental', ['webhooks:manage', 'patients:write']);
  const r = await app.post('/v1/webhooks', { url: receiver.url, event_types: ['patient.created'] }, key);
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  receiver.secret = r.body.data.secret;
  const sub = Number(r.body.data.id.slice(3));
  await app.post('/v1/patients', { first_name: 'A', last_name: `B${sub}` }, key);
  const boss = app.server.jobs.queue.boss;
  const [a] = (await boss.fetch(DELIVERY_QUEUE)) as unknown as Fetched[];
  // A's claim lapses: pg-boss puts the job back for another attempt (what its supervisor does).
  await sql(
    `update pgboss.job set state = 'retry', start_after = now() - interval '1 s', retry_count = retry_count + 1 where id = ?`,
    [a.id],
  );
  const [b] = (await boss.fetch(DELIVERY_QUEUE)) as unknown as Fetched[];
  expect(b.id).toBe(a.id);
  expect(b.retryCount).toBeGreaterThan(a.retryCount);
  return { sub, a, b };
}

const claimOf = (j: Fetched) => ({ id: j.id, retryCount: j.retryCount });
const run = (j: Fetched) => attemptDelivery(deps(), j.data, claimOf(j));
const log = (sub: number) =>
  sql('select attempt, status from webhook_delivery where subscription_id = ? order by id', [sub]);
const jobs = (sub: number) =>
  sql(
    `select (data->>'attempt')::int as attempt, state from pgboss.job where name = ? and data->>'subscription' = ? order by created_on, id`,
    [DELIVERY_QUEUE, String(sub)],
  );

describe('an attempt whose claim lapsed', () => {
  it('failed: records nothing and queues no retry; the holder records it and queues one', async () => {
    receiver.mode.status = 500;
    const { sub, a, b } = await handedOver();
    expect((await run(a)).outcome).toBe('skipped');
    expect(await log(sub)).toEqual([]);
    expect(await jobs(sub)).toEqual([{ attempt: 1, state: 'active' }]);
    expect((await run(b)).outcome).toBe('failed');
    expect(await log(sub)).toEqual([{ attempt: 1, status: 'failed' }]);
    expect(await jobs(sub)).toEqual([
      { attempt: 1, state: 'completed' },
      { attempt: 2, state: 'created' },
    ]);
  });

  it('succeeded: records nothing; the holder records it once', async () => {
    receiver.mode.status = 204;
    const { sub, a, b } = await handedOver();
    expect((await run(a)).outcome).toBe('skipped');
    expect(await log(sub)).toEqual([]);
    const done = await run(b);
    expect(done.outcome, JSON.stringify(done)).toBe('succeeded');
    expect(await log(sub)).toEqual([{ attempt: 1, status: 'succeeded' }]);
    expect(await jobs(sub)).toEqual([{ attempt: 1, state: 'completed' }]);
  });
});
