import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestApp, type TestApp } from './helpers.ts';
import { connect, type TestSocket, until } from './ws-client.ts';

/**
 * With no live subscriber in the process, the event relay moves its watermark without reading
 * the outbox's rows (src/services/events/relay.ts): a write burst costs no read for no one, and a
 * subscriber that comes later gets those events from its replay (`after:`), then live ones.
 */
const reads = vi.hoisted(() => ({ relay: 0 }));

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
