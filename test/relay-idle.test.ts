import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { IDLE_ADVANCE_MS } from '../src/services/events/relay.ts';
import { startTestApp, type TestApp } from './helpers.ts';
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

let app: TestApp;
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
  it('a subscriber without after, arriving while the relay is behind, gets nothing committed before it', async () => {
    const hub = app.server.app.eventHub;
    expect(hub.size).toBe(0);
    await createPatient(100);
    const [before] = await newestEventIds(1);
    await until(() => reads.heard.includes(before), 2000);
    // Heard, not yet published: the relay waits for its idle pace.
    expect(hub.watermark).toBeLessThan(before);
    const s = connect(app.url, { Authorization: `Bearer ${reader}` });
    const sub = s.subscribe('subscription { events(types: [PATIENT_CREATED]) { id } }');
    await until(() => hub.size === 1);
    await createPatient(101);
    const [after] = await newestEventIds(1);
    const got = await sub.waitFor(1);
    await new Promise((r) => setTimeout(r, 200));
    expect(sub.results.map((r) => Number(r.events.id.slice(4)))).toEqual([after]);
    expect(Number(got[0].events.id.slice(4))).toBe(after);
    await s.dispose();
    await until(() => hub.size === 0);
  });

  it('advances at most every IDLE_ADVANCE_MS through a burst of writes', async () => {
    reads.snapshots = 0;
    const started = Date.now();
    for (let i = 0; i < 30; i++) await createPatient(200 + i);
    const [last] = await newestEventIds(1);
    await until(() => app.server.app.eventHub.watermark >= last);
    const ticks = Math.ceil((Date.now() - started) / IDLE_ADVANCE_MS) + 1;
    expect(reads.snapshots).toBeGreaterThan(0);
    expect(reads.snapshots).toBeLessThanOrEqual(ticks + 2);
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
  });
});
