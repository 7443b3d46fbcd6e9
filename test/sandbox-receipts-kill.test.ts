import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import path from 'node:path';
import type { MikroORM } from '@mikro-orm/postgresql';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../src/auth/keys.ts';
import { openOrm } from '../src/db/orm.ts';
import { signBody } from '../src/lib/signing.ts';
import { inboundEvent } from '../src/network/sandbox.ts';
import { SANDBOX_RECEIPTS_QUEUE } from '../src/network/sandbox-receipts.ts';
import { createClinic } from '../src/services/clinics/clinics.ts';
import { MEDIA_LINK_SECRET, NETWORK_SECRET, testDatabase } from './helpers.ts';

/**
 * The sandbox network keeps its receipts whatever happens to the service (issue 25), as a real
 * network does: a service killed with SIGKILL after the network accepted a message, before any
 * receipt came, gets the message's sent, delivered and read receipts once it is started again.
 * Two real service processes on one database, one after the other; this process only drives them.
 */
const root = path.resolve(import.meta.dirname, '..');
const node = path.join(root, 'node_modules/.bin/node');
// Long enough to kill the first process after the send is accepted and before the first receipt.
const DELAYS = '2500,3000,3500';

let db: { url: string; drop: () => Promise<void> };
let orm: MikroORM;
let sql: pg.Client;
let write: string;
let read: string;
let clinicPhone: string;
const children: ChildProcessWithoutNullStreams[] = [];

beforeAll(async () => {
  db = await testDatabase();
  orm = await openOrm(db.url);
  const clinic = await createClinic(orm.em.fork(), {
    name: 'Receipts clinic',
    kind: 'dental',
    mode: 'test',
    country: 'IL',
    phone: '+97235550999',
  });
  clinicPhone = clinic.phone as string;
  write = (await createApiKey(orm.em.fork(), { clinicId: clinic.id, name: 'w', scopes: ['chat:write'] })).key;
  read = (await createApiKey(orm.em.fork(), { clinicId: clinic.id, name: 'r', scopes: ['chat:read'] })).key;
  sql = new pg.Client({ connectionString: db.url });
  await sql.connect();
});

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await sql?.end();
  await orm?.close();
  await db?.drop();
});

/** Starts a service process on the test's database; answers its address. */
async function startService(): Promise<{
  child: ChildProcessWithoutNullStreams;
  url: string;
  out: () => string;
}> {
  const child = spawn(node, ['test/sandbox-receipts-child.ts'], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: db.url,
      NETWORK_SECRET,
      MEDIA_LINK_SECRET,
      SANDBOX_DELAYS: DELAYS,
      LOG_LEVEL: 'warn',
    },
  });
  children.push(child);
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service not ready:\n${out}`)), 30_000);
    child.stdout.on('data', () => {
      const found = /listening on (http:\/\/\S+)/.exec(out)?.[1];
      if (found) {
        clearTimeout(timer);
        resolve(found);
      }
    });
  });
  return { child, url, out: () => out };
}

async function waitFor(ok: () => Promise<boolean>, why: () => string, ms: number) {
  const until = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > until) throw new Error(why());
    await new Promise((r) => setTimeout(r, 20));
  }
}

const row = async (id: string) =>
  (
    await sql.query<{ network_message_id: string | null; sent_at: Date | null }>(
      'select network_message_id, sent_at from message where id = $1',
      [id.slice(4)],
    )
  ).rows[0];

describe('sandbox receipts', () => {
  it('a service killed with SIGKILL after the network took a message gets its receipts once restarted', {
    timeout: 90_000,
  }, async () => {
    const first = await startService();
    const to = '+972501234567';
    // The patient writes first (the network's signed callback), so free text may be sent.
    const inbound = JSON.stringify(inboundEvent({ clinicPhone, from: to, text: 'Hi' }, new Date()));
    const hi = await fetch(`${first.url}/hooks/network`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-service-signature': signBody(NETWORK_SECRET, inbound),
      },
      body: inbound,
    });
    expect(hi.status).toBe(200);
    const r = await fetch(`${first.url}/v1/chat/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${write}` },
      body: JSON.stringify({ to, text: 'Your receipts survive us' }),
    });
    expect(r.status).toBe(202);
    const id = ((await r.json()) as { data: { id: string } }).data.id;
    // The network took it (its id saved): then the process dies, before any receipt is due.
    await waitFor(
      async () => !!(await row(id))?.network_message_id,
      () => `not accepted:\n${first.out()}`,
      10_000,
    );
    const exited = new Promise((resolve) => first.child.on('exit', (_code, signal) => resolve(signal)));
    first.child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    const { network_message_id: networkId, sent_at } = await row(id);
    expect(sent_at).toBeNull();
    const { rows: kept } = await sql.query<{ state: string }>(
      `select state from pgboss.job where name = $1 and data->>'networkMessageId' = $2`,
      [SANDBOX_RECEIPTS_QUEUE, networkId],
    );
    expect(kept.map((k) => k.state)).toEqual(['created']);

    // Past every receipt's time with no service running: nothing could take them.
    await new Promise((res) => setTimeout(res, 3600));
    expect((await row(id)).sent_at).toBeNull();

    const second = await startService();
    const status = async () =>
      (
        (await (
          await fetch(`${second.url}/v1/chat/messages/${id}`, {
            headers: { authorization: `Bearer ${read}` },
          })
        ).json()) as { data: { status: string; timestamps: Record<string, string | null> } }
      ).data;
    await waitFor(
      async () => (await status()).status === 'read',
      () => `not read:\n${second.out()}`,
      10_000,
    );
    const m = await status();
    expect(m.timestamps.sent_at && m.timestamps.delivered_at && m.timestamps.read_at).toBeTruthy();
    second.child.kill('SIGTERM');
  });
});
