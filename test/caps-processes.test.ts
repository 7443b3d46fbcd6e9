import type { ChildProcess } from 'node:child_process';
import type { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Pooler, pgbouncerBinary, startPgBouncer } from '../bench/pgbouncer.ts';
import { createApiKey } from '../src/auth/keys.ts';
import { openOrm } from '../src/db/orm.ts';
import type { Limits } from '../src/lib/limits.ts';
import { createClinic } from '../src/services/clinics/clinics.ts';
import { MEDIA_LINK_SECRET, NETWORK_SECRET, testDatabase } from './helpers.ts';
import { type ServiceProcess, startServiceProcess } from './service-process.ts';
import { connect, type TestSocket } from './ws-client.ts';

/**
 * A key's caps hold across service PROCESSES on one database (issue 35; docs/limits.md,
 * Websockets and Rate limits): two real server processes (test/service-child.ts), the test
 * only a client. A key's sockets spread over both are capped at WS_MAX_PER_KEY in all, a place
 * freed on one is a place on the other, and the sockets of a process killed with SIGKILL stop
 * counting within WS_INSTANCE_TIMEOUT_MS. A key's rate budget spent through both is one budget.
 * The processes reach PostgreSQL through PgBouncer in transaction mode when it is installed (as
 * `.ci/run` has it), directly otherwise.
 */
const CAP = 3;
const INSTANCE_TIMEOUT_MS = 3000;
const BUDGET = 60;
const limits: Partial<Limits> = {
  wsMaxPerKey: CAP,
  wsInstanceTimeoutMs: INSTANCE_TIMEOUT_MS,
  rateLimitPoints: BUDGET,
  rateLimitWindowSeconds: 600,
  rateLimitedDelayMs: 0,
  authFailuresPerMinute: 0,
};

type Service = ServiceProcess;

const children: ChildProcess[] = [];
const sockets: TestSocket[] = [];
let db: Awaited<ReturnType<typeof testDatabase>>;
let pooler: Pooler | null = null;
let orm: MikroORM;
let clinicId: number;

/** A real server process (test/service-child.ts), through the pooler when there is one. */
const startService = (): Promise<Service> =>
  startServiceProcess(
    {
      DATABASE_URL: pooler ? pooler.through(db.url) : db.url,
      ...(pooler ? { DATABASE_SESSION_URL: db.url } : {}),
      NETWORK_SECRET,
      MEDIA_LINK_SECRET,
      LIMITS: JSON.stringify(limits),
    },
    children,
    'test/service-child.ts',
  );

const kill = async (child: ChildProcess) => {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
};

let a: Service;
let b: Service;
/** Started once b is killed. */
let c: Service;

beforeAll(async () => {
  db = await testDatabase();
  if (pgbouncerBinary()) pooler = await startPgBouncer(db.url);
  else console.warn('caps-processes.test.ts: pgbouncer is not installed; the processes connect directly');
  orm = await openOrm(db.url);
  const clinic = await createClinic(orm.em.fork(), {
    name: 'two instances',
    kind: 'dental',
    mode: 'test',
    country: 'IL',
    phone: '+97235559901',
  });
  clinicId = clinic.id;
  [a, b] = await Promise.all([startService(), startService()]);
}, 90_000);

afterAll(async () => {
  await Promise.all(sockets.map((s) => s.dispose()));
  await Promise.all(children.map(kill));
  await orm?.close();
  await pooler?.close();
  await db?.drop();
});

const newKey = async (scopes: string[]) =>
  (await createApiKey(orm.em.fork(), { clinicId, name: 'caps', scopes })).key;

/** A socket's fate: acknowledged, or closed (with its code and reason) before that. */
async function attempt(url: string, key: string): Promise<{ socket: TestSocket; outcome: string }> {
  const socket = connect(url, { Authorization: `Bearer ${key}` });
  sockets.push(socket);
  const outcome = await Promise.race([
    socket.connected.then(() => 'connected'),
    socket.closed.then((e) => `${e.code} ${e.reason}`),
    new Promise<string>((r) => setTimeout(() => r('no answer'), 5000)),
  ]);
  return { socket, outcome };
}

/** Tries to connect until admitted (each refusal closes its socket), or fails after `ms`. */
async function admittedWithin(url: string, key: string, ms: number): Promise<TestSocket> {
  const end = Date.now() + ms;
  for (;;) {
    const { socket, outcome } = await attempt(url, key);
    if (outcome === 'connected') return socket;
    expect(outcome).toBe('4429 Too many connections');
    if (Date.now() > end) throw new Error(`still refused after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

it('a key’s websockets are capped across both processes, a place freed on one is one on the other, a killed one’s stop counting', {
  timeout: 60_000,
}, async () => {
  const key = await newKey(['webhooks:manage']);
  // One at a time, spread: a, b, a.
  const held: TestSocket[] = [];
  for (const service of [a, b, a]) {
    const { socket, outcome } = await attempt(service.url, key);
    expect(outcome).toBe('connected');
    held.push(socket);
  }
  // The cap is the key's, not each process's: the next is refused on either.
  expect((await attempt(b.url, key)).outcome).toBe('4429 Too many connections');
  expect((await attempt(a.url, key)).outcome).toBe('4429 Too many connections');
  // Another key is not touched.
  expect((await attempt(b.url, await newKey(['webhooks:manage']))).outcome).toBe('connected');

  // A socket closed on a is a place on b (its release reaches the database just after the close).
  await held[0].dispose();
  held[0] = await admittedWithin(b.url, key, 3000);
  expect((await attempt(a.url, key)).outcome).toBe('4429 Too many connections');

  // b holds two of the three; killed, they still count until its heartbeat is older than the
  // instance timeout, then no longer.
  await kill(b.child);
  const killed = performance.now();
  expect((await attempt(a.url, key)).outcome).toBe('4429 Too many connections');
  await admittedWithin(a.url, key, INSTANCE_TIMEOUT_MS + 2000);
  const freed = performance.now() - killed;
  expect(freed).toBeLessThan(INSTANCE_TIMEOUT_MS + 1000);
  // Exactly the cap again: a's first socket, this one, one more, and no fourth.
  await admittedWithin(a.url, key, 1000);
  expect((await attempt(a.url, key)).outcome).toBe('4429 Too many connections');

  // The table emptied (an unlogged table after a PostgreSQL crash): a's next heartbeat, a third
  // of the instance timeout later, writes its three sockets again, and a new process c sees them.
  c = await startService();
  await orm.em.getConnection().execute('truncate websocket_hold');
  await new Promise((r) => setTimeout(r, INSTANCE_TIMEOUT_MS / 3 + 500));
  expect((await attempt(c.url, key)).outcome).toBe('4429 Too many connections');
});

it('a key’s rate budget spent through both processes is one budget', async () => {
  // b was killed above: c stands in for it.
  c ??= await startService();
  const key = await newKey(['patients:read']);
  const get = async (url: string) => {
    const r = await fetch(`${url}/v1/patients?limit=1`, { headers: { authorization: `Bearer ${key}` } });
    await r.arrayBuffer();
    return r;
  };
  // What one request costs (the same on both): the budget less what remains after the first.
  const first = await get(a.url);
  expect(first.status).toBe(200);
  const cost = BUDGET - Number(first.headers.get('ratelimit-remaining'));
  const served = Math.floor(BUDGET / cost);
  expect(served).toBeGreaterThanOrEqual(4);
  const statuses: { via: string; status: number }[] = [{ via: 'a', status: 200 }];
  for (let i = 1; i < served * 2 + 2; i++) {
    const via = i % 2 ? 'c' : 'a';
    statuses.push({ via, status: (await get(via === 'c' ? c.url : a.url)).status });
  }
  // The first `served` are served, by both in turn; every one after is a 429, from both.
  expect(statuses.slice(0, served).map((s) => s.status)).toEqual(Array(served).fill(200));
  expect(statuses.slice(served).map((s) => s.status)).toEqual(Array(served + 2).fill(429));
  expect(new Set(statuses.slice(served).map((s) => s.via))).toEqual(new Set(['a', 'c']));
}, 60_000);
