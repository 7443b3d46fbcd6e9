import { beforeAll, expect, it } from 'vitest';
import { type AppServices, runRequest } from '../src/lib/request-context.ts';
import { EventHub } from '../src/services/events/hub.ts';
import { liveEvents, MAX_UNREAD } from '../src/services/events/live.ts';
import { startTestApp, type TestApp } from './helpers.ts';
import { systemContext } from './system-context.ts';

/**
 * A subscription holds what its client has not read yet, within bounds (src/services/events/live.ts):
 * a replay goes at the client's pace, and a client that stops reading is ended, not buffered for.
 */
let app: TestApp;
let clinicId: number;
const ctx = (clinic = clinicId) =>
  systemContext(
    { em: app.orm.em, services: {} as AppServices },
    { clinicId: clinic, clinicKind: 'dental', country: 'IL', clock: app.clock, scopes: ['webhooks:manage'] },
  );

/**
 * `count` events of a new clinic (every `sampleEvery`-th a sample) after one more it starts from
 * (`before`), and the last id.
 */
async function outbox(count: number, sampleEvery = 0) {
  const clinic = (await app.clinicWithKey('dental', ['patients:read'], `bounds ${count}`)).clinicId;
  const conn = app.orm.em.getConnection();
  await conn.execute(
    `insert into "event" ("clinic_id", "type", "scope", "data", "created_at", "test")
     select ${clinic}, 'patient.created', 'patients:read', jsonb_build_object('n', n), now(),
       ${sampleEvery ? `n > 0 and n % ${sampleEvery} = 0` : 'false'}
     from generate_series(0, ${count}) n order by n`,
  );
  const [{ before, last }] = await conn.execute(
    `select min("id") as "before", max("id") as "last" from "event" where "clinic_id" = ${clinic}`,
  );
  return { clinic, before: Number(before), last: Number(last) };
}

/** The ids a replay after `before` yields up to `last` (the hub's watermark), read as they come. */
async function replayed(c: ReturnType<typeof ctx>, before: number, last: number, expected: number) {
  const hub = new EventHub();
  hub.advance(last);
  // In the operation's scope, as a subscription runs: its reads count against its read budget.
  const feed = runRequest(c, () => liveEvents(c, hub, { after: `evt_${before}` }));
  const ids: string[] = [];
  try {
    for await (const e of feed) {
      ids.push(e.id as string);
      if (ids.length === expected) break;
    }
  } finally {
    await feed.return?.();
  }
  return ids;
}

beforeAll(async () => {
  app = await startTestApp();
  clinicId = (await app.clinicWithKey('dental', ['patients:read'], 'bounds')).clinicId;
});

it('a replay of a long outbox reads its next page only once the client has read the last one', async () => {
  const conn = app.orm.em.getConnection();
  await conn.execute(
    `insert into "event" ("clinic_id", "type", "scope", "data", "created_at")
     select ${clinicId}, 'patient.created', 'patients:read', jsonb_build_object('n', n), now()
     from generate_series(1, 350) n`,
  );
  const [{ first, last }] = await conn.execute(
    `select min("id") as "first", max("id") as "last" from "event" where "clinic_id" = ${clinicId}`,
  );
  const hub = new EventHub();
  hub.advance(Number(last));
  const feed = liveEvents(ctx(), hub, { after: `evt_${first}` });
  await new Promise((r) => setTimeout(r, 300));
  // The outbox emptied: whatever the feed still yields was held in memory before.
  await conn.execute(`delete from "event" where "clinic_id" = ${clinicId}`);
  let held = 0;
  const stop = setTimeout(() => feed.return?.(), 500);
  for await (const _ of feed) held++;
  clearTimeout(stop);
  expect(held).toBeGreaterThan(0);
  expect(held).toBeLessThanOrEqual(100);
});

it('a client that stops reading is ended with response_too_large once MAX_UNREAD events wait', async () => {
  const hub = new EventHub();
  const feed = liveEvents(ctx(), hub, {});
  expect(hub.size).toBe(1);
  for (let id = 1; id <= MAX_UNREAD + 1; id++)
    hub.publish({
      id,
      clinicId,
      type: 'patient.created',
      scope: 'patients:read',
      createdAt: new Date(),
      data: { id: `pat_${id}` },
    });
  // Let go of at once: nothing more is held for it.
  expect(hub.size).toBe(0);
  await expect(feed.next()).rejects.toMatchObject({ code: 'response_too_large' });
});

it('a replay reads each page against the response cap on its own, not its whole length against it', async () => {
  // About 180 counted bytes an event: a page of 100 is under 30 kB, the 350 together are not.
  const { clinic, before, last } = await outbox(350);
  const c = ctx(clinic);
  c.readBudget = { bytes: 0, max: 30_000 };
  expect(await replayed(c, before, last, 350)).toHaveLength(350);
  expect(c.readBudget.bytes).toBe(0);
  // A page over the cap is refused as any read over it.
  const small = ctx(clinic);
  small.readBudget = { bytes: 0, max: 5_000 };
  await expect(replayed(small, before, last, 350)).rejects.toMatchObject({ code: 'response_too_large' });
});

it('a replay yields no sample event, as the relay streams none and GET /v1/events lists none', async () => {
  const { clinic, before, last } = await outbox(9, 3);
  const ids = await replayed(ctx(clinic), before, last, 6);
  const [{ samples }] = await app.orm.em
    .getConnection()
    .execute(
      `select array_agg('evt_' || "id") as "samples" from "event" where "clinic_id" = ${clinic} and "test"`,
    );
  expect(samples).toHaveLength(3);
  expect(ids.filter((id) => samples.includes(id))).toEqual([]);
  expect(ids).toHaveLength(6);
});
