import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD, shareEmbedded, USER } from '../src/lib/embedded-postgres.ts';
import { freePort } from './free-port.ts';

/**
 * The embedded PostgreSQL's lease survives a lost connection: after its backend is terminated
 * the process takes the lease again, so another process finishing does not stop the server
 * under it.
 */
const dir = mkdtempSync(path.join(tmpdir(), 'cg-lease-'));
// The server runs as its own user (when the tests run as root): it must reach the folder.
chmodSync(dir, 0o755);
let port = 0;
const admin = () =>
  new pg.Client({ host: '127.0.0.1', port, user: USER, password: PASSWORD, database: 'postgres' });
let stopFirst: (() => Promise<void>) | undefined;

beforeAll(async () => {
  port = await freePort();
});

afterAll(async () => {
  await stopFirst?.();
  rmSync(dir, { recursive: true, force: true });
});

async function leases(): Promise<number> {
  const c = admin();
  await c.connect();
  try {
    const { rows } = await c.query(
      "select count(*)::int as n from pg_locks where locktype = 'advisory' and mode = 'ShareLock' and granted",
    );
    return rows[0].n;
  } finally {
    await c.end();
  }
}

describe('embedded PostgreSQL lease', () => {
  it('is taken again after its connection is terminated, so another process cannot stop the server', async () => {
    const first = await shareEmbedded(dir, port);
    stopFirst = first.stop;
    expect(await leases()).toBe(1);
    const c = admin();
    await c.connect();
    await c.query(
      "select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'clinic-gateway lease'",
    );
    await c.end();
    let n = 0;
    for (let i = 0; i < 50 && n !== 1; i++) {
      await new Promise((r) => setTimeout(r, 100));
      n = await leases();
    }
    expect(n).toBe(1);
    // A CLI command comes and goes: it is not the last one out.
    const cli = await shareEmbedded(dir, port);
    await cli.stop();
    const still = admin();
    await still.connect();
    expect((await still.query('select 1 as ok')).rows[0].ok).toBe(1);
    await still.end();
  }, 120_000);
});
