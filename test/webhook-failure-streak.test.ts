import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookSubscription } from '../src/entities/index.ts';
import { FixedClock } from '../src/lib/clock.ts';
import { DELIVERY_QUEUE } from '../src/services/webhooks/delivery-jobs.ts';
import {
  DISABLE_AFTER_HOURS,
  MAX_SCHEDULED_ATTEMPTS,
  retryDelaySeconds,
  STREAK_GAP_SECONDS,
} from '../src/services/webhooks/retry-schedule.ts';
import { type AttemptDeps, attemptDelivery } from '../src/webhooks/attempt.ts';
import { startTestApp, type TestApp } from './helpers.ts';
import { type Receiver, startReceiver } from './webhook-receiver.ts';

/**
 * The auto-disable rule counts a failure streak (issue 25): failures with no success and no quiet
 * gap longer than STREAK_GAP_SECONDS between them. Attempts are run directly on an injected clock
 * (no worker in this app), as test/webhook-retries.test.ts does; the receiver always answers 500.
 */
let app: TestApp;
let key: string;
let receiver: Receiver;

beforeAll(async () => {
  app = await startTestApp({ workers: false });
  key = (await app.clinicWithKey('dental', ['webhooks:manage', 'patients:write'])).key;
  receiver = await startReceiver();
  receiver.mode.status = 500;
});
afterAll(() => receiver.close());

const HOUR = 3600_000;
const clock = new FixedClock('2026-11-02T00:00:00Z');
const deps = (random: number): AttemptDeps => ({
  em: app.orm.em,
  clock,
  timeoutMs: 1000,
  random: () => random,
});

async function subscribe(): Promise<number> {
  const r = await app.post('/v1/webhooks', { url: receiver.url, event_types: ['patient.created'] }, key);
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return Number(r.body.data.id.slice(3));
}

/** A new event for `sub` (a patient written): its id, from the first attempt the write queued with it. */
let written = 0;
async function newEvent(sub: number): Promise<number> {
  // Not a timestamp: 13 digits pass the card-number rule's Luhn check one time in ten.
  const r = await app.post('/v1/patients', { first_name: 'Quinn', last_name: `Q${++written}` }, key);
  // A refused write (under CI load, say) would otherwise show as a missing job below.
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  const [job] = await app.orm.em
    .fork()
    .getConnection()
    .execute<any[]>(
      `select data from pgboss.job where name = ? and data->>'subscription' = ? and (data->>'attempt')::int = 1 order by created_on desc, id desc limit 1`,
      [DELIVERY_QUEUE, String(sub)],
    );
  expect(job, `no first attempt queued for subscription ${sub}`).toBeDefined();
  return Number(job.data.event);
}

const subscription = (sub: number) =>
  app.orm.em.fork().findOneOrFail(WebhookSubscription, sub, { filters: false });

describe('auto-disable counts a failure streak, not time without a success', () => {
  it('a failure, four quiet days, a failure: not disabled, and the new event gets its retries', async () => {
    const sub = await subscribe();
    clock.set('2026-11-02T00:00:00Z');
    const first = await attemptDelivery(deps(0.5), {
      subscription: sub,
      event: await newEvent(sub),
      attempt: 1,
      trigger: 'scheduled',
    });
    expect(first).toMatchObject({ outcome: 'failed', disabled: false });
    // No event for four days (the first one's retries are not run: nothing was attempted).
    clock.advance(4 * 24 * HOUR);
    const later = await attemptDelivery(deps(0.5), {
      subscription: sub,
      event: await newEvent(sub),
      attempt: 1,
      trigger: 'scheduled',
    });
    expect(later).toMatchObject({ outcome: 'failed', disabled: false });
    expect(later.outcome === 'failed' && later.nextAttemptAt).not.toBeNull();
    const s = await subscription(sub);
    expect(s.enabled).toBe(true);
    // The streak starts again at the failure after the gap.
    expect(s.failingSince?.toISOString()).toBe(clock.now().toISOString());
    expect(s.lastFailureAt?.toISOString()).toBe(clock.now().toISOString());
    expect(s.consecutiveFailures).toBe(1);
    // The API shows the service's own streak (the portal's "Failing: 1 attempt in a row since …").
    const shown = await app.get(`/v1/webhooks/wh_${sub}`, key);
    expect(shown.body.data).toMatchObject({ failure_streak: 1, failing_since: clock.now().toISOString() });
  });

  // Shortest schedule (the largest pause before the next day's event) and longest (8 h waits
  // become 9.6 h): either way one event a day keeps one streak.
  for (const random of [0, 0.999999]) {
    it(`steady traffic (an event a day, each failing its whole schedule, random ${random}): disabled at ${DISABLE_AFTER_HOURS} h`, async () => {
      const sub = await subscribe();
      const start = new Date('2026-11-10T00:00:00Z').getTime();
      // Every attempt of one event a day for four days, in time order, as the worker would run them.
      const timeline: { at: number; event: number; attempt: number }[] = [];
      for (let day = 0; day < 4; day++) {
        const event = await newEvent(sub);
        let at = start + day * 24 * HOUR;
        for (let attempt = 1; attempt <= MAX_SCHEDULED_ATTEMPTS; attempt++) {
          timeline.push({ at, event, attempt });
          at += (retryDelaySeconds(attempt, random) ?? 0) * 1000;
        }
      }
      timeline.sort((a, b) => a.at - b.at || a.event - b.event);
      let last = start;
      let disabledAt: number | null = null;
      for (const { at, event, attempt } of timeline) {
        // The pauses of this traffic are all shorter than the gap that ends a streak.
        expect(at - last).toBeLessThan(STREAK_GAP_SECONDS * 1000);
        last = at;
        clock.set(new Date(at));
        const out = await attemptDelivery(deps(random), {
          subscription: sub,
          event,
          attempt,
          trigger: 'scheduled',
        });
        if (out.outcome === 'skipped') throw new Error(out.reason);
        expect(out.outcome).toBe('failed');
        if (out.disabled) {
          disabledAt = at;
          break;
        }
      }
      // The first failure at or after 72 h from the first one disables it: the fourth day's first attempt.
      expect(disabledAt).toBe(start + DISABLE_AFTER_HOURS * HOUR);
      const s = await subscription(sub);
      expect(s.enabled).toBe(false);
      expect(s.failingSince?.getTime()).toBe(start);
      // A change of the subscription through the unit of work: its version (ETag) is the disable's time.
      expect(s.disabledAt?.getTime()).toBe(disabledAt);
      expect(new Date(s.updatedAt).getTime()).toBe(disabledAt);
      expect(s.disabledReason).toContain(
        `${DISABLE_AFTER_HOURS} hours, from ${new Date(start).toISOString()}`,
      );
    });
  }
});
