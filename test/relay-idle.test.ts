import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { RunningServer } from '../src/server/start.ts';
import { EventHub, type LiveEvent } from '../src/services/events/hub.ts';
import { IDLE_ADVANCE_MS } from '../src/services/events/relay.ts';
import { secondInstance, startTestApp, type TestApp } from './helpers.ts';
import { connect, type TestSocket, until } from './ws-client.ts';

/**
 * With no live subscriber in the process, the event relay moves its watermark at most every
 * IDLE_ADVANCE_MS and without reading the outbox's rows (src/services/events/relay.ts): a write
 * burst costs next to nothing for no one. A subscriber that comes later wakes it, and gets the
 * same events as if the relay had kept up: with `after:`, those committed before it from its
 * replay, then live ones; without, none committed before it subscribed.
 */
const reads = vi.hoisted(() => ({ relay: 0, snapshots: 0, heard: [] as number[] }));

vi.mock('../src/lib/listen.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('../src/lib/listen.ts')>();
  return {
    ...original,
    listen: (opts: Parameters<typeof original.listen>[0]) => {
      if (opts.channel !== 'event_recorded') return original.listen(opts);
      return original.listen({
        ...opts,
        onNotify: (payload) => {
          const id = Number(payload?.split(':')[1]);
          if (id) reads.heard.push(id);
          opts.onNotify(payload);
        },
        onListening: (client, again) => {
          // The relay's reads of the writers in flight (its snapshot and its polls).
          const query = client.query.bind(client) as (...a: unknown[]) => unknown;
          (client as any).query = (...a: unknown[]) => {
            if (/pg_locks/.test(String((a[0] as { text?: string })?.text ?? a[0]))) reads.snapshots++;
            return query(...a);
          };
          opts.onListening?.(client, again);
        },
      });
    },
  };
});

vi.mock('../src/db/list.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('../src/db/list.ts')>();
  return {
    ...original,
    readAfterId: (...args: Parameters<typeof original.readAfterId>) => {
      // The relay's read: every clinic's rows, on its own connection.
      if (args[6]?.allClinics) reads.relay++;
      return original.readAfterId(...args);
    },
  };
});

let app: TestApp & { databaseUrl: string };
let writer: string;
let reader: string;
let socket: TestSocket | undefined;

beforeAll(async () => {
  app = await startTestApp();
  const c = await app.clinicWithKey('dental', ['patients:write'], 'idle relay');
  writer = c.key;
  reader = await app.key(c.clinicId, ['webhooks:manage']);
});

afterAll(async () => {
  await socket?.dispose();
});

async function createPatient(i: number): Promise<void> {
  const r = await app.post('/v1/patients', { first_name: `Idle${i}`, last_name: 'Relay' }, writer);
  expect(r.status).toBe(201);
}

async function newestEventIds(n: number): Promise<number[]> {
  const rows = await app.orm.em
    .fork()
    .getConnection()
    .execute<{ id: string }[]>('select id from event order by id desc limit ?', [n]);
  return rows.map((r) => Number(r.id)).reverse();
}

describe('the event relay without subscribers', () => {
  it('advances at most every IDLE_ADVANCE_MS through a burst of writes', async () => {
    expect(app.server.app.eventHub.size).toBe(0);
    reads.snapshots = 0;
    const started = Date.now();
    for (let i = 0; i < 30; i++) await createPatient(200 + i);
    const [last] = await newestEventIds(1);
    await until(() => app.server.app.eventHub.watermark >= last);
    const ticks = Math.ceil((Date.now() - started) / IDLE_ADVANCE_MS) + 1;
    expect(reads.snapshots).toBeGreaterThan(0);
    // A snapshot per advance, and a poll or two where a write was still in flight.
    expect(reads.snapshots).toBeLessThanOrEqual(2 * ticks + 2);
  });

  it('reads no rows, yet a later subscriber replays them and then gets the live ones', async () => {
    const hub = app.server.app.eventHub;
    expect(hub.size).toBe(0);
    reads.relay = 0;
    for (let i = 0; i < 5; i++) await createPatient(i);
    const ids = await newestEventIds(5);
    await until(() => hub.watermark >= ids[4]);
    expect(reads.relay).toBe(0);

    socket = connect(app.url, { Authorization: `Bearer ${reader}` });
    const sub = socket.subscribe(
      'subscription($after: ID) { events(types: [PATIENT_CREATED], after: $after) { id } }',
      { after: `evt_${ids[0]}` },
    );
    await until(() => hub.size === 1);
    await createPatient(5);
    const got = await sub.waitFor(5);
    const [live] = await newestEventIds(1);
    expect(got.map((r) => Number(r.events.id.slice(4)))).toEqual([...ids.slice(1), live]);
    expect(reads.relay).toBeGreaterThan(0);
    await socket.dispose();
    socket = undefined;
    await until(() => hub.size === 0);
  });
});

describe('an idle relay a subscriber wakes', () => {
  // A second instance whose relay, idle, would wait a minute: what it publishes soon after a
  // subscriber arrives, the arrival woke it to.
  let slow: RunningServer;
  let closeSlow: () => Promise<void>;

  beforeAll(async () => {
    ({ server: slow, close: closeSlow } = await secondInstance(app, { relayIdleMs: 60_000 }));
  });

  afterAll(async () => {
    await closeSlow?.();
  });

  it('with after: replays what it missed and takes the rest live, at once', async () => {
    const hub = slow.app.eventHub;
    await createPatient(300);
    const [missed] = await newestEventIds(1);
    await until(() => reads.heard.filter((id) => id === missed).length >= 2);
    expect(hub.watermark).toBeLessThan(missed);
    const s = connect(slow.url, { Authorization: `Bearer ${reader}` });
    const sub = s.subscribe(
      'subscription($after: ID) { events(types: [PATIENT_CREATED], after: $after) { id } }',
      { after: `evt_${missed - 1}` },
    );
    await until(() => hub.size === 1);
    await createPatient(301);
    const [live] = await newestEventIds(1);
    const got = await sub.waitFor(2, 3000);
    expect(got.map((r) => Number(r.events.id.slice(4)))).toEqual([missed, live]);
    await s.dispose();
    await until(() => hub.size === 0);
  });

  it('with after, behind by more than a subscription may buffer: the replay reads what the relay has not published', async () => {
    const hub = slow.app.eventHub;
    await createPatient(400);
    const [first] = await newestEventIds(1);
    // 1,100 more committed while the relay idles: more than MAX_UNREAD (1,000).
    await app.orm.em
      .fork()
      .getConnection()
      .execute(
        `insert into event (clinic_id, type, scope, data, created_at, test)
         select clinic_id, type, scope, data, created_at, test from event, generate_series(1, 1100) where id = ?`,
        [first],
      );
    const [last] = await newestEventIds(1);
    await until(() => reads.heard.filter((id) => id === last).length >= 2);
    expect(hub.watermark).toBeLessThan(first);
    const s = connect(slow.url, { Authorization: `Bearer ${reader}` });
    const sub = s.subscribe(
      'subscription($after: ID) { events(types: [PATIENT_CREATED], after: $after) { id } }',
      { after: `evt_${first}` },
    );
    const got = await sub.waitFor(1100, 10_000);
    expect(sub.errors).toEqual([]);
    const ids = got.map((r) => Number(r.events.id.slice(4)));
    expect(ids).toHaveLength(1100);
    expect(ids[0]).toBe(first + 1);
    expect(ids[1099]).toBe(last);
    expect(new Set(ids).size).toBe(1100);
    await s.dispose();
    await until(() => hub.size === 0);
  });

  it('without after: gets nothing committed before it subscribed, however far behind the relay is', async () => {
    const hub = slow.app.eventHub;
    await createPatient(100);
    const [before] = await newestEventIds(1);
    await until(() => reads.heard.filter((id) => id === before).length >= 2);
    expect(hub.watermark).toBeLessThan(before);
    const s = connect(slow.url, { Authorization: `Bearer ${reader}` });
    const sub = s.subscribe('subscription { events(types: [PATIENT_CREATED]) { id } }');
    await until(() => hub.size === 1);
    await createPatient(101);
    const [after] = await newestEventIds(1);
    await sub.waitFor(1, 3000);
    await new Promise((r) => setTimeout(r, 200));
    expect(sub.results.map((r) => Number(r.events.id.slice(4)))).toEqual([after]);
    await s.dispose();
  });
});

describe('EventHub: a subscription without after', () => {
  const event = (id: number) =>
    ({ id, clinicId: 1, type: 'patient.created', scope: '', data: {}, createdAt: new Date() }) as LiveEvent;
  const feed = (hub: EventHub) => {
    const got: number[] = [];
    hub.subscribe(1, (e) => got.push(e.id), { fromNow: true });
    for (const id of [101, 102, 103]) hub.publish(event(id));
    return got;
  };

  it('skips the run announced just above the watermark: committed before it, nothing below in flight', () => {
    const hub = new EventHub();
    hub.advance(100);
    hub.announce(101);
    hub.announce(102);
    expect(feed(hub)).toEqual([103]);
  });

  it('gets an announced id above one still in flight, with it (every event above some id)', () => {
    const hub = new EventHub();
    hub.advance(100);
    // 101 in flight; 102 committed and heard, held back by the relay until 101 settles.
    hub.announce(102);
    expect(feed(hub)).toEqual([101, 102, 103]);
  });

  it('counts a listener once, however often it subscribes', () => {
    const hub = new EventHub();
    const listener = () => {};
    const off = [hub.subscribe(1, listener), hub.subscribe(1, listener)];
    expect(hub.size).toBe(1);
    for (const f of off) f();
    expect(hub.size).toBe(0);
  });
});
