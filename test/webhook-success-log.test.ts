import { beforeAll, describe, expect, it } from 'vitest';
import { DELIVERY_QUEUE } from '../src/services/webhooks/delivery-jobs.ts';
import { recordSuccess, type Success } from '../src/webhooks/success-log.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * Successful attempts written together (src/webhooks/success-log.ts): successes that end together
 * share one statement; each gets its own delivery row, its job completed in the same statement; a
 * row that cannot be written (its event deleted meanwhile) fails alone, not its batch-mates.
 */
let app: TestApp;
let key: string;
let clinicId: number;

beforeAll(async () => {
  // No workers: the jobs stay as the test leaves them.
  app = await startTestApp({ workers: false });
  const c = await app.clinicWithKey('dental', ['webhooks:manage', 'patients:write']);
  key = c.key;
  clinicId = c.clinicId;
});

const sql = <T = any>(q: string, params: unknown[] = []) =>
  app.orm.em.fork().getConnection().execute<T[]>(q, params);

/** A subscription and `n` events, each with its first attempt queued; the jobs marked active (fetched). */
async function queued(n: number) {
  const r = await app.post(
    '/v1/webhooks',
    { url: 'https://example.com/hooks', event_types: ['patient.created'] },
    key,
  );
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  const sub = Number(r.body.data.id.slice(3));
  for (let i = 0; i < n; i++)
    await app.post('/v1/patients', { first_name: 'Ada', last_name: `L${sub}x${i}` }, key);
  const jobs = await sql<{ id: string; event: number; retry_count: number }>(
    `update pgboss.job set state = 'active', started_on = now() where name = ? and data->>'subscription' = ? returning id, (data->>'event')::int as event, retry_count`,
    [DELIVERY_QUEUE, String(sub)],
  );
  expect(jobs).toHaveLength(n);
  return { sub, jobs: jobs.sort((a, b) => a.event - b.event) };
}

const success = (sub: number, job: { id: string; event: number; retry_count?: number }): Success => ({
  clinicId,
  subscription: sub,
  event: job.event,
  trigger: 'scheduled',
  attempt: 1,
  attemptedAt: new Date('2026-11-01T10:00:00Z'),
  status: 204,
  excerpt: null,
  durationMs: 3,
  now: new Date('2026-11-01T10:00:01Z'),
  job: { id: job.id, retryCount: job.retry_count ?? 0 },
});

describe('the success log', () => {
  it('successes ending together: one statement, a row each with its own event, every job completed', async () => {
    const { sub, jobs } = await queued(8);
    const before = app.queries.length;
    const ids = await Promise.all(jobs.map((j) => recordSuccess(app.orm.em, success(sub, j))));
    const statements = app.queries.slice(before).filter((q) => q.includes('webhook_delivery'));
    // The first two go at once (two writers); the other six wait for them and go together.
    expect(statements.length).toBeLessThanOrEqual(3);
    const rows = await sql<{ id: number; event_id: number; status: string }>(
      'select id, event_id, status from webhook_delivery where subscription_id = ? order by id',
      [sub],
    );
    // Each answered id is the row of its own event (two statements may commit in either order).
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect(ids.map((id) => [byId.get(id as number)?.event_id, byId.get(id as number)?.status])).toEqual(
      jobs.map((j) => [j.event, 'succeeded']),
    );
    expect(rows).toHaveLength(jobs.length);
    const states = await sql<{ state: string }>('select state from pgboss.job where id::text in (?)', [
      jobs.map((j) => j.id),
    ]);
    expect(states.map((s) => s.state)).toEqual(jobs.map(() => 'completed'));
  });

  it('a row that cannot be written fails alone; its batch-mates are recorded', async () => {
    const { sub, jobs } = await queued(5);
    const gone = { id: jobs[4].id, event: 99_999_999, retry_count: 0 };
    // The first two take both writers; the next three wait and go as one statement, which fails.
    const results = await Promise.allSettled([
      ...jobs.slice(0, 4).map((j) => recordSuccess(app.orm.em, success(sub, j))),
      recordSuccess(app.orm.em, success(sub, gone)),
    ]);
    expect(results.map((r) => r.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'fulfilled',
      'fulfilled',
      'rejected',
    ]);
    const rows = await sql<{ event_id: number }>(
      'select event_id from webhook_delivery where subscription_id = ? order by event_id',
      [sub],
    );
    expect(rows.map((r) => r.event_id)).toEqual(jobs.slice(0, 4).map((j) => j.event));
    const [left] = await sql<{ state: string }>('select state from pgboss.job where id = ?::uuid', [gone.id]);
    // Not completed: pg-boss fails it and runs it again.
    expect(left.state).toBe('active');
  });

  it('a success whose claim lapsed (another worker holds the job) writes nothing and settles nothing; its batch-mates do', async () => {
    const { sub, jobs } = await queued(4);
    // The last job was handed out again (its first worker missed its heartbeat): retry_count 1.
    await sql('update pgboss.job set retry_count = 1 where id = ?::uuid', [jobs[3].id]);
    const ids = await Promise.all(
      jobs.map((j) => recordSuccess(app.orm.em, success(sub, { ...j, retry_count: 0 }))),
    );
    expect(ids.slice(0, 3).every((id) => typeof id === 'number')).toBe(true);
    expect(ids[3]).toBeNull();
    const rows = await sql<{ event_id: number }>(
      'select event_id from webhook_delivery where subscription_id = ? order by event_id',
      [sub],
    );
    expect(rows.map((r) => r.event_id)).toEqual(jobs.slice(0, 3).map((j) => j.event));
    const [held] = await sql<{ state: string }>('select state from pgboss.job where id = ?::uuid', [
      jobs[3].id,
    ]);
    expect(held.state).toBe('active');
    // The worker holding it now records it.
    expect(await recordSuccess(app.orm.em, success(sub, { ...jobs[3], retry_count: 1 }))).toEqual(
      expect.any(Number),
    );
  });
});
