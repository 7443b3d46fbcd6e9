import { beforeAll, expect, it } from 'vitest';
import type { AppServices } from '../src/lib/request-context.ts';
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
const ctx = () =>
  systemContext(
    { em: app.orm.em, services: {} as AppServices },
    { clinicId, clinicKind: 'dental', country: 'IL', clock: app.clock, scopes: ['webhooks:manage'] },
  );

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
