import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookSubscription } from '../src/entities/index.ts';
import { FixedClock } from '../src/lib/clock.ts';
import { DELIVERY_QUEUE } from '../src/services/webhooks/delivery-jobs.ts';
import {
  DISABLE_AFTER_HOURS,
  MAX_SCHEDULED_ATTEMPTS,
  RETRY_DELAYS_SECONDS,
} from '../src/services/webhooks/retry-schedule.ts';
import { type AttemptDeps, attemptDelivery } from '../src/webhooks/attempt.ts';
import { startTestApp, type TestApp } from './helpers.ts';
import { type Receiver, startReceiver } from './webhook-receiver.ts';

/**
 * The retry schedule and the auto-disable rule walked through with an injected clock (issue 17):
 * attempts are run directly (no worker in this app), each failed one queuing the next as a new
 * job; the SSRF guard at connect time; the run-time checks that make DELETE and a type no longer
 * subscribed stop queued attempts.
 */
let app: TestApp;
let key: string;
let receiver: Receiver;

beforeAll(async () => {
  app = await startTestApp({ workers: false });
  key = (await app.clinicWithKey('dental', ['webhooks:manage', 'patients:write'])).key;
  receiver = await startReceiver();
});
afterAll(() => receiver.close());

const clock = new FixedClock('2026-11-02T00:00:00Z');
const deps = (over: Partial<AttemptDeps> = {}): AttemptDeps => ({
  em: app.orm.em,
  clock,
  timeoutMs: 1000,
  random: () => 0.5,
  ...over,
});

async function subscribed(url = receiver.url) {
  const r = await app.post('/v1/webhooks', { url, event_types: ['patient.created'] }, key);
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  receiver.secret = r.body.data.secret;
  const sub = Number(r.body.data.id.slice(3));
  await app.post('/v1/patients', { first_name: 'Sam', last_name: `S${sub}` }, key);
  const [job] = await jobsOf(sub);
  expect(job, 'the write queued the first attempt').toBeDefined();
  return { id: r.body.data.id as string, sub, event: Number(job.data.event) };
}

const jobsOf = (sub: number) =>
  app.orm.em
    .fork()
    .getConnection()
    .execute<any[]>(
      `select id, data, start_after, state from pgboss.job where name = ? and data->>'subscription' = ? order by created_on, id`,
      [DELIVERY_QUEUE, String(sub)],
    );

const subscription = (sub: number) =>
  app.orm.em.fork().findOneOrFail(WebhookSubscription, sub, { filters: false });

describe('the retry schedule', () => {
  it('each failed attempt queues the next after its delay; next_attempt_at on the injected clock; then none', async () => {
    receiver.mode.status = 500;
    const { sub, event } = await subscribed();
    clock.set('2026-11-02T00:00:00Z');
    for (let attempt = 1; attempt <= MAX_SCHEDULED_ATTEMPTS; attempt++) {
      const before = Date.now();
      const out = await attemptDelivery(deps(), { subscription: sub, event, attempt, trigger: 'scheduled' });
      if (out.outcome === 'skipped') throw new Error(out.reason);
      expect(out.outcome).toBe('failed');
      const delay = RETRY_DELAYS_SECONDS[attempt - 1];
      if (delay === undefined) {
        expect(out.nextAttemptAt).toBeNull();
        break;
      }
      expect(out.nextAttemptAt?.toISOString()).toBe(
        new Date(clock.now().getTime() + delay * 1000).toISOString(),
      );
      // The next attempt is a new job, held back by the same delay (pg-boss counts on the database's clock).
      const jobs = await jobsOf(sub);
      const next = jobs.find((j) => j.data.attempt === attempt + 1);
      expect(next?.data).toEqual({ subscription: sub, event, attempt: attempt + 1, trigger: 'scheduled' });
      const held = new Date(next.start_after).getTime() - before;
      expect(held).toBeGreaterThan(delay * 1000 - 2000);
      expect(held).toBeLessThan(delay * 1000 + 2000);
      clock.advance(delay * 1000);
    }
    const total = RETRY_DELAYS_SECONDS.reduce((a, b) => a + b, 0);
    expect(total / 3600).toBeGreaterThan(23);
    expect(total / 3600).toBeLessThan(25);
    const log = await app.get(`/v1/webhooks/wh_${sub}/deliveries?limit=100`, key);
    expect(log.body.data.map((d: any) => d.attempt)).toEqual(
      Array.from({ length: MAX_SCHEDULED_ATTEMPTS }, (_, i) => MAX_SCHEDULED_ATTEMPTS - i),
    );
    expect(log.body.data[0].next_attempt_at).toBeNull();
  });

  it('jitter: ±20 % of the delay', async () => {
    receiver.mode.status = 500;
    const { sub, event } = await subscribed();
    clock.set('2026-11-03T00:00:00Z');
    const lo = await attemptDelivery(deps({ random: () => 0 }), {
      subscription: sub,
      event,
      attempt: 2,
      trigger: 'scheduled',
    });
    const hi = await attemptDelivery(deps({ random: () => 0.999999 }), {
      subscription: sub,
      event,
      attempt: 2,
      trigger: 'scheduled',
    });
    const at = (o: typeof lo) =>
      o.outcome === 'skipped' ? 0 : (o.nextAttemptAt as Date).getTime() - clock.now().getTime();
    expect(at(lo)).toBe(48_000);
    expect(at(hi)).toBe(72_000);
  });
});

describe('auto-disable', () => {
  it(`every attempt failing for ${DISABLE_AFTER_HOURS} h disables it; a success in between starts again`, async () => {
    receiver.mode.status = 500;
    const { id, sub, event } = await subscribed();
    const job = { subscription: sub, event, attempt: 1, trigger: 'scheduled' as const };
    clock.set('2026-11-10T00:00:00Z');
    await attemptDelivery(deps(), job);
    expect((await subscription(sub)).failingSince?.toISOString()).toBe('2026-11-10T00:00:00.000Z');
    clock.advance(60 * 3600_000);
    // A success resets the streak.
    receiver.mode.status = undefined;
    expect((await attemptDelivery(deps(), job)).outcome).toBe('succeeded');
    expect((await subscription(sub)).failingSince).toBeNull();
    receiver.mode.status = 500;
    await attemptDelivery(deps(), job);
    // Failing every 8 hours (a streak: no pause longer than STREAK_GAP_SECONDS) for 71 hours.
    const streakStart = clock.now().getTime();
    for (const h of [8, 16, 24, 32, 40, 48, 56, 64, DISABLE_AFTER_HOURS - 1]) {
      clock.set(new Date(streakStart + h * 3600_000));
      const still = await attemptDelivery(deps(), job);
      expect(still).toMatchObject({ outcome: 'failed', disabled: false });
    }
    expect((await subscription(sub)).enabled).toBe(true);
    clock.advance(3600_000);
    const off = await attemptDelivery(deps(), job);
    expect(off).toMatchObject({ outcome: 'failed', disabled: true });
    expect(off.outcome === 'failed' && off.nextAttemptAt).toBeNull();
    const shown = (await app.get(`/v1/webhooks/${id}`, key)).body.data;
    expect(shown.enabled).toBe(false);
    expect(shown.disabled_at).toBe(clock.now().toISOString());
    expect(shown.disabled_reason).toContain(`${DISABLE_AFTER_HOURS} hours`);
    // Nothing is sent to a disabled subscription; a manual retry is a 409 until it is recovered.
    const hits = receiver.hits;
    expect((await attemptDelivery(deps(), job)).outcome).toBe('skipped');
    expect(receiver.hits).toBe(hits);
    const log = await app.get(`/v1/webhooks/${id}/deliveries`, key);
    const retry = await app.post(`/v1/webhooks/${id}/deliveries/${log.body.data[0].id}/retry`, {}, key);
    expect(retry.status).toBe(409);
    expect(retry.body.error.code).toBe('conflict');
    const rec = await app.post(`/v1/webhooks/${id}/recover`, { since: clock.now().toISOString() }, key);
    expect(rec.status, JSON.stringify(rec.body)).toBe(202);
    expect(rec.body.data).toMatchObject({ enabled: true, disabled_at: null, disabled_reason: null });
    expect((await subscription(sub)).failingSince).toBeNull();
  });
});

describe('recover against a write under way', () => {
  it('an event written while the subscription was disabled, committed after recover began, is queued', async () => {
    const { id, sub } = await subscribed();
    await app.orm.em
      .fork()
      .nativeUpdate(WebhookSubscription, { id: sub }, { enabled: false, disabledAt: new Date() }, {
        filters: false,
      } as any);
    const s = await subscription(sub);
    // A write of the clinic, its event inserted (no subscription enabled: nothing queued), not
    // committed yet.
    const writer = new pg.Client({ connectionString: (app as any).databaseUrl });
    await writer.connect();
    try {
      await writer.query('begin');
      const {
        rows: [event],
      } = await writer.query(
        `insert into "event" ("clinic_id", "type", "scope", "data", "created_at")
         values ($1, 'patient.created', 'patients:read', '{}', now()) returning "id"`,
        [(s.clinic as unknown as { id: number }).id],
      );
      const recovering = app.post(`/v1/webhooks/${id}/recover`, { since: '2026-01-01T00:00:00Z' }, key);
      await new Promise((r) => setTimeout(r, 300));
      await writer.query('commit');
      expect((await recovering).status).toBe(202);
      const queued = (await jobsOf(sub)).filter((j) => Number(j.data.event) === Number(event.id));
      expect(queued).toHaveLength(1);
    } finally {
      await writer.end();
    }
  });
});

describe('what stops an attempt before it is sent', () => {
  it('DELETE: a job already taken finds the subscription deleted and sends nothing', async () => {
    receiver.mode.status = undefined;
    const { id, sub, event } = await subscribed();
    expect((await app.send('DELETE', `/v1/webhooks/${id}`, undefined, key)).status).toBe(200);
    const hits = receiver.hits;
    const out = await attemptDelivery(deps(), { subscription: sub, event, attempt: 1, trigger: 'scheduled' });
    expect(out).toEqual({ outcome: 'skipped', reason: 'subscription deleted' });
    expect(receiver.hits).toBe(hits);
  });

  it('a type no longer subscribed', async () => {
    const { sub, event } = await subscribed();
    await app.orm.em
      .fork()
      .nativeUpdate(WebhookSubscription, { id: sub }, { eventTypes: ['patient.updated'] }, {
        filters: false,
      } as any);
    const out = await attemptDelivery(deps(), { subscription: sub, event, attempt: 1, trigger: 'scheduled' });
    expect(out).toEqual({ outcome: 'skipped', reason: 'type no longer subscribed' });
  });

  it('SSRF at connect time: a host that resolves to a private address now is not connected to', async () => {
    const { sub, event } = await subscribed();
    // Created when it resolved to a public address; now it answers 10.0.0.7 (DNS rebinding).
    await app.orm.em
      .fork()
      .nativeUpdate(WebhookSubscription, { id: sub }, { url: 'https://rebind.example.test/hooks' }, {
        filters: false,
      } as any);
    const resolve: AttemptDeps['resolve'] = (_host, _opts, cb) =>
      cb(null, [{ address: '10.0.0.7', family: 4 }]);
    const out = await attemptDelivery(deps({ resolve }), {
      subscription: sub,
      event,
      attempt: 1,
      trigger: 'scheduled',
    });
    expect(out.outcome).toBe('failed');
    if (out.outcome !== 'failed') return;
    expect(out.result.error).toBe(
      'rebind.example.test resolved to an address that is not allowed when connecting (private range); not sent.',
    );
    expect(out.result.status).toBeNull();
    // A live clinic's receiver on loopback is refused the same way, at every attempt: the policy
    // is its clinic's, read with the subscription (its mode set here behind the API's back).
    const em = app.orm.em.fork();
    await em.nativeUpdate(WebhookSubscription, { id: sub }, { url: 'https://localhost:9/hooks' }, {
      filters: false,
    } as any);
    const setMode = (mode: 'test' | 'live') =>
      em
        .getConnection()
        .execute(
          'update clinic set mode = ? where id = (select clinic_id from webhook_subscription where id = ?)',
          [mode, sub],
        );
    await setMode('live');
    try {
      const lo = await attemptDelivery(deps(), {
        subscription: sub,
        event,
        attempt: 1,
        trigger: 'scheduled',
      });
      expect(lo.outcome === 'failed' && lo.result.error).toContain('loopback range');
      await setMode('test');
      const test = await attemptDelivery(deps(), {
        subscription: sub,
        event,
        attempt: 1,
        trigger: 'scheduled',
      });
      expect(test.outcome === 'failed' && test.result.error).not.toContain('loopback range');
    } finally {
      await setMode('test');
    }
  });

  it('a redirect is a failure, not followed', async () => {
    receiver.mode.status = 302;
    const { sub, event } = await subscribed();
    const out = await attemptDelivery(deps(), { subscription: sub, event, attempt: 1, trigger: 'scheduled' });
    expect(out.outcome === 'failed' && out.result.error).toBe(
      'Redirects are not followed: status 302 to /elsewhere.',
    );
    receiver.mode.status = undefined;
  });
});
