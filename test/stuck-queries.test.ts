import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { watchStuckQueries } from '../src/lib/stuck-queries.ts';
import { testDatabase } from './helpers.ts';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.ts';

/** The client-side watchdog behind the pool (what pg's query_timeout did, without a timer per query). */
const LIMIT = 400;
let db: Awaited<ReturnType<typeof testDatabase>>;
let proxy: TcpProxy;
let pool: pg.Pool;

beforeAll(async () => {
  db = await testDatabase();
  const url = new URL(db.url);
  proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port) });
  pool = new pg.Pool({ connectionString: proxy.through(db.url), max: 2 });
  pool.on('error', () => {});
  watchStuckQueries(pool, LIMIT);
});

afterAll(async () => {
  await pool.end();
  await proxy.close();
  await db.drop();
});

describe('a statement the database does not answer', () => {
  it('fails after the limit, its connection discarded; the pool then serves on a new one', async () => {
    expect((await pool.query('select 1 as one')).rows[0].one).toBe(1);
    proxy.freeze();
    const started = performance.now();
    try {
      await expect(pool.query('select 2')).rejects.toThrow(/Connection terminated/);
    } finally {
      proxy.restore();
    }
    const ms = performance.now() - started;
    expect(ms).toBeGreaterThanOrEqual(LIMIT);
    // At most two sweeps (a quarter of the limit each) after the limit, plus slack for a busy
    // machine; without the sweep it would wait for ever.
    expect(ms).toBeLessThan(LIMIT * 1.5 + 1500);
    expect((await pool.query('select 3 as three')).rows[0].three).toBe(3);
  });

  it('is not confused with a slow one inside the limit, or with a connection idle for longer', async () => {
    const slow = await pool.query('select pg_sleep(0.2), 4 as four');
    expect(slow.rows[0].four).toBe(4);
    await new Promise((r) => setTimeout(r, LIMIT * 2));
    expect((await pool.query('select 5 as five')).rows[0].five).toBe(5);
    expect(pool.totalCount).toBeGreaterThan(0);
  });
});
