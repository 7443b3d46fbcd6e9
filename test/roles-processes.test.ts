import type { ChildProcess } from 'node:child_process';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, rolesOf } from '../src/lib/config.ts';
import { SERVICE_ROLES, WORKER_ROLES } from '../src/lib/roles.ts';
import { MEDIA_LINK_SECRET, NETWORK_SECRET, testDatabase } from './helpers.ts';
import { killAll, type ServiceProcess, startServiceProcess } from './service-process.ts';
import { until } from './until.ts';
import { startWorkerProcess } from './worker-process.ts';

/**
 * `npm start` and `npm run worker` are one composition with roles (src/server/run-process.ts,
 * src/lib/roles.ts), as real processes on one database:
 * - a worker's roles are ROLES (sweeps alone here: it takes this period's sweeps at once, not one
 *   period after its start);
 * - a worker that sends signs with its secrets, so they are compared with the instances' both
 *   ways: a worker with other secrets is refused, and an instance started with other secrets
 *   than a live worker's is refused too (its presence, src/server/presence.ts);
 * - sends asked for by ROLES where they cannot run (no PUBLIC_URL) refuse the start.
 */
const children: ChildProcess[] = [];
let db: Awaited<ReturnType<typeof testDatabase>>;

const OTHER = { NETWORK_SECRET: 'another-network-secret', MEDIA_LINK_SECRET: 'another-media-secret' };
const SAME = { NETWORK_SECRET, MEDIA_LINK_SECRET };

const instance = (secrets: Record<string, string>): Promise<ServiceProcess> =>
  startServiceProcess({ DATABASE_URL: db.url, ...secrets }, children, 'test/service-child.ts');
const worker = (env: Record<string, string>) =>
  startWorkerProcess(db.url, children, { LOG_LEVEL: 'warn', ...env });
const kill = (child: ChildProcess) => killAll([child]);

beforeAll(async () => {
  db = await testDatabase();
});
afterAll(async () => {
  await killAll(children);
  await db?.drop();
});

describe('roles', () => {
  it('come from ROLES, else the entry point, with WORKERS=off as ROLES without deliveries', () => {
    expect(rolesOf(loadConfig({}), SERVICE_ROLES)).toEqual(['http', 'deliveries', 'sends', 'sweeps']);
    expect(rolesOf(loadConfig({}), WORKER_ROLES)).toEqual(['deliveries', 'sends', 'sweeps']);
    expect(rolesOf(loadConfig({ ROLES: 'sweeps, http' }), WORKER_ROLES)).toEqual(['sweeps', 'http']);
    expect(rolesOf(loadConfig({ WORKERS: 'off' }), SERVICE_ROLES)).toEqual(['http', 'sends', 'sweeps']);
    expect(() => loadConfig({ ROLES: 'http,mail' })).toThrow(/ROLES: not a role: mail/);
    expect(() => loadConfig({ ROLES: ' , ' })).toThrow(/ROLES: no role given/);
    expect(() => loadConfig({ ROLES: 'http', WORKERS: 'off' })).toThrow(/set ROLES alone/);
  });

  // Processes start slower on a busy machine: each test has two minutes.
  it('a worker with the sweeps role alone sweeps at start, once for this period', {
    timeout: 120_000,
  }, async () => {
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const sweeps = async () =>
        (
          await client.query<{ name: string; state: string }>(
            `select name, state from pgboss.job where name like 'sweep.%' order by name`,
          )
        ).rows;
      expect(await sweeps()).toEqual([]);
      // An hour's period (the default): without the ask at start nothing would run for an hour.
      const sweeper = await worker({ ROLES: 'sweeps' });
      await until(sweeps, (rows) => rows.filter((s) => s.state === 'completed').length === 2, 15_000);
      expect(await sweeps()).toEqual([
        { name: 'sweep.event-retention', state: 'completed' },
        { name: 'sweep.media-orphans', state: 'completed' },
      ]);
      // A second start within the period asks again and is told it has run.
      const again = await worker({ ROLES: 'sweeps' });
      await new Promise((r) => setTimeout(r, 500));
      expect(await sweeps()).toHaveLength(2);
      await Promise.all([kill(sweeper), kill(again)]);
    } finally {
      await client.end();
    }
  });

  it('a sending worker with other secrets than the instances is refused; an instance with other secrets than a worker is too', {
    timeout: 120_000,
  }, async () => {
    const first = await instance(SAME);
    const sending = { PUBLIC_URL: first.url, ROLES: 'sends' };
    await expect(worker({ ...sending, ...OTHER })).rejects.toThrow(/other secrets/);
    const same = await worker({ ...sending, ...SAME });
    // With the instance gone, the worker alone holds the secrets an instance must share.
    await kill(first.child);
    await expect(instance(OTHER)).rejects.toThrow(/other secrets/);
    await instance(SAME);
    await kill(same);
  });

  it('sends asked for by ROLES where they cannot run refuse the start, naming what is missing', {
    timeout: 120_000,
  }, async () => {
    await expect(worker({ ROLES: 'deliveries,sends', ...SAME })).rejects.toThrow(/PUBLIC_URL/);
  });
});
