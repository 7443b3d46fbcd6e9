import { spawn } from 'node:child_process';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { authenticate, forgetKey, keyHashOf } from '../src/auth/keys.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * The server caches key verdicts (here for a minute); a revocation made by another process, the
 * CLI, must still take effect at once through PostgreSQL NOTIFY.
 */
const root = path.resolve(import.meta.dirname, '..');
let app: TestApp;
let clinicId: number;

beforeAll(async () => {
  app = await startTestApp({ keyCacheTtlMs: 60_000 });
  ({ clinicId } = await app.clinicWithKey('dental', ['patients:read']));
});

async function newKey(): Promise<{ id: string; key: string }> {
  const key = await app.key(clinicId, ['patients:read']);
  const [row] = await app.orm.em.fork().getConnection().execute('select max(id) as id from api_key');
  return { id: `key_${row.id}`, key };
}

function cli(...args: string[]): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const child = spawn(path.join(root, 'node_modules/.bin/node'), ['src/cli.ts', ...args], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: app.orm.config.get('clientUrl'), LOG_LEVEL: 'warn' },
      stdio: 'ignore',
    });
    child.on('error', reject);
    child.on('close', resolve);
  });
}

async function statusWithin(ms: number, key: string, want: number): Promise<number> {
  const until = Date.now() + ms;
  let status = 0;
  do {
    status = (await app.get('/v1/patients', key)).status;
    if (status === want) return status;
    await new Promise((r) => setTimeout(r, 50));
  } while (Date.now() < until);
  return status;
}

describe('key cache', () => {
  it('holds a verdict for its TTL when nothing is announced', async () => {
    const k = await newKey();
    expect((await app.get('/v1/patients', k.key)).status).toBe(200);
    // A change behind the service's back (no NOTIFY) is not seen while the entry is fresh.
    await app.orm.em
      .fork()
      .getConnection()
      .execute('update api_key set revoked_at = now() where id = ?', [Number(k.id.slice(4))]);
    expect((await app.get('/v1/patients', k.key)).status).toBe(200);
  });

  it('a key revoked with the CLI in another process is refused at once', { timeout: 30_000 }, async () => {
    const k = await newKey();
    expect((await app.get('/v1/patients', k.key)).status).toBe(200);
    expect(await cli('key', 'revoke', k.id)).toBe(0);
    expect(await statusWithin(2000, k.key, 401)).toBe(401);
  });

  it('a key revoked while the listener reconnects is refused once it is back', {
    timeout: 30_000,
  }, async () => {
    const k = await newKey();
    const sql = app.orm.em.fork().getConnection();
    await sql.execute(
      `select pg_terminate_backend(pid) from pg_stat_activity
       where application_name = 'clinic-gateway key changes' and datname = current_database()`,
    );
    await new Promise((r) => setTimeout(r, 200));
    // Cached as valid while no one listens; the revocation's NOTIFY reaches no one.
    expect((await app.get('/v1/patients', k.key)).status).toBe(200);
    await sql.execute('update api_key set revoked_at = now() where id = ?', [Number(k.id.slice(4))]);
    expect(await statusWithin(5000, k.key, 401)).toBe(401);
  });
});

it('does not cache a verdict read while a key change was heard: the read may predate the change', async () => {
  const { key } = await newKey();
  const header = `Bearer ${key}`;
  // The change is heard while the lookup is under way (its read began before the revocation
  // committed); the revocation is then made without a notification, so only the cache could
  // still answer the old verdict.
  const lookup = authenticate(app.orm.em, header, 60_000);
  forgetKey(keyHashOf(header) as string);
  await lookup;
  await app.orm.em
    .getConnection()
    .execute(`update api_key set revoked_at = now() where hash = ?`, [keyHashOf(header)]);
  await expect(authenticate(app.orm.em, header, 60_000)).rejects.toMatchObject({ code: 'unauthenticated' });
});
