import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../src/server/start.ts';
import { secondInstance, startTestApp, type TestApp } from './helpers.ts';
import { connect, type TestSocket, until } from './ws-client.ts';

/**
 * Two service instances on one database (two servers, two ORMs, two relays): an event committed
 * through either reaches the `events` subscribers of both, exactly once each (the outbox
 * trigger's NOTIFY, read back by each instance's relay: src/services/events/relay.ts).
 */
let app: TestApp & { databaseUrl: string };
let second: RunningServer;
let closeSecond: () => Promise<void>;
let writer: string;
let reader: string;
const sockets: TestSocket[] = [];

beforeAll(async () => {
  app = await startTestApp();
  // A second instance of the same cluster: the same secrets as the test app's.
  ({ server: second, close: closeSecond } = await secondInstance(app));
  const c = await app.clinicWithKey('dental', ['patients:write'], 'relay');
  writer = c.key;
  reader = await app.key(c.clinicId, ['webhooks:manage']);
});

afterAll(async () => {
  await Promise.all(sockets.map((s) => s.dispose()));
  await closeSecond();
});

describe('events across instances', () => {
  it('reach every subscriber of every instance exactly once, whichever instance committed them', async () => {
    const query = 'subscription { events(types: [PATIENT_CREATED]) { id data } }';
    const subs = [app.url, app.url, second.url, second.url].map((url) => {
      const s = connect(url, { Authorization: `Bearer ${reader}` });
      sockets.push(s);
      return s.subscribe(query);
    });
    await until(() => app.server.app.eventHub.size === 2 && second.app.eventHub.size === 2);
    const created: string[] = [];
    const writes = [];
    for (let i = 0; i < 10; i++) {
      const base = i % 2 ? second.url : app.url;
      writes.push(
        fetch(`${base}/v1/patients`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${writer}` },
          body: JSON.stringify({ first_name: `R${i}`, last_name: 'Relay' }),
        }).then(async (r) => {
          expect(r.status).toBe(201);
          created.push((await r.json()).data.id);
        }),
      );
    }
    await Promise.all(writes);
    for (const sub of subs) await sub.waitFor(10);
    // Late duplicates would arrive now.
    await new Promise((r) => setTimeout(r, 300));
    for (const sub of subs) {
      expect(sub.errors).toEqual([]);
      const patients = sub.results.map((r) => r.events.data.id);
      expect(patients).toHaveLength(10);
      expect(new Set(patients)).toEqual(new Set(created));
      const ids = sub.results.map((r) => Number(r.events.id.slice(4)));
      expect(new Set(ids).size).toBe(10);
      // Concurrent writes commit out of id order; the relays publish in id order all the same.
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
    }
  });
});

describe('a relay that lost its connection', () => {
  it('reconnects and publishes the events committed meanwhile, once', async () => {
    await Promise.all(sockets.splice(0).map((x) => x.dispose()));
    await until(() => app.server.app.eventHub.size === 0 && second.app.eventHub.size === 0);
    const s = connect(app.url, { Authorization: `Bearer ${reader}` });
    sockets.push(s);
    const sub = s.subscribe('subscription { events(types: [PATIENT_CREATED]) { id data } }');
    await until(() => app.server.app.eventHub.size === 1);
    // Both instances' relays and key listeners share the name; cut the first instance's relay only.
    const admin = (await app.orm.em.getConnection().getNativeClient()) as pg.Pool;
    const { rows } = await admin.query<{ pid: number }>(
      `select pid from pg_stat_activity where application_name like 'clinic-gateway events%' and datname = current_database() order by backend_start limit 1`,
    );
    expect(rows).toHaveLength(1);
    await admin.query('select pg_terminate_backend($1)', [rows[0].pid]);
    // Committed while that relay is away (through the second instance, which still listens).
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await fetch(`${second.url}/v1/patients`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${writer}` },
        body: JSON.stringify({ first_name: `Gap${i}`, last_name: 'Relay' }),
      });
      ids.push((await r.json()).data.id);
    }
    await sub.waitFor(3, 8000);
    await new Promise((r) => setTimeout(r, 300));
    expect(sub.results.map((r) => r.events.data.id)).toEqual(ids);
  });
});

describe("another process's start-up probe on the events channel", () => {
  it('moves no relay past events still to come, whatever its payload', async () => {
    await Promise.all(sockets.splice(0).map((x) => x.dispose()));
    await until(() => app.server.app.eventHub.size === 0 && second.app.eventHub.size === 0);
    const s = connect(app.url, { Authorization: `Bearer ${reader}` });
    sockets.push(s);
    const sub = s.subscribe('subscription { events(types: [PATIENT_CREATED]) { id data } }');
    await until(() => app.server.app.eventHub.size === 1);
    // A probe as a starting process sends it (listen.ts, roundTrip), and ones whose random part
    // could read as an id: every relay on the database hears them.
    const admin = (await app.orm.em.getConnection().getNativeClient()) as pg.Pool;
    for (const payload of ['probe:9000000000000', '12:9000000000000x', 'probe:n0123'])
      await admin.query('select pg_notify($1, $2)', ['event_recorded', payload]);
    await new Promise((r) => setTimeout(r, 200));
    const r = await fetch(`${app.url}/v1/patients`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${writer}` },
      body: JSON.stringify({ first_name: 'AfterProbe', last_name: 'Relay' }),
    });
    const id = (await r.json()).data.id;
    await sub.waitFor(1, 8000);
    expect(sub.results.map((x) => x.events.data.id)).toEqual([id]);
  });
});

describe('shutdown', () => {
  it('closes open sockets with 1001 and finishes promptly', async () => {
    const s = connect(second.url, { Authorization: `Bearer ${reader}` });
    sockets.push(s);
    s.subscribe('subscription { events { id } }');
    await s.connected;
    const started = Date.now();
    await closeSecond();
    expect((await s.closed).code).toBe(1001);
    expect(Date.now() - started).toBeLessThan(3000);
  });
});
