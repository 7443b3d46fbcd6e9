import path from 'node:path';
import { MikroORM, type Options } from '@mikro-orm/postgresql';
import pg from 'pg';
import { PASSWORD, shareEmbedded, USER } from './embedded-postgres.ts';
import { defaultLimits, type Limits } from './limits.ts';
import { connectionMode, rememberConnection } from './session-url.ts';
import { poolClient } from './statement-names.ts';
import { watchStuckQueries } from './stuck-queries.ts';

export interface DatabaseHandle {
  url: string;
  stop(): Promise<void>;
}

/**
 * The PostgreSQL to use: DATABASE_URL when set, otherwise an embedded server whose data lives in
 * `dataDir/pg` and survives restarts.
 *
 * The embedded server is shared: `npm start`, CLI commands and test runs on the same data
 * directory use one postmaster. Whoever finds none starts it (detached, logging to
 * `dataDir/postgres.log`); the others connect to it. Each process holds a shared advisory lock on
 * a "lease" connection while it uses the server, and on stop() the last one out (the only one that
 * gets the lock exclusively) shuts it down. A server left behind by a killed process is simply
 * reused, and stopped by the next last one out.
 */
export async function startDatabase(opts: {
  url?: string;
  dataDir: string;
  port: number;
  database?: string;
}): Promise<DatabaseHandle> {
  if (opts.url) return { url: opts.url, stop: async () => {} };
  const server = await shareEmbedded(path.resolve(opts.dataDir), opts.port);
  const base = `postgresql://${USER}:${PASSWORD}@127.0.0.1:${opts.port}`;
  const name = opts.database ?? 'clinic_gateway';
  try {
    await ensureDatabase(`${base}/postgres`, name);
  } catch (err) {
    await server.stop();
    throw err;
  }
  return { url: `${base}/${name}`, stop: server.stop };
}

export async function ensureDatabase(adminUrl: string, name: string, template?: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (!rowCount) {
      await client
        .query(
          `create database ${pg.escapeIdentifier(name)}${template ? ` template ${pg.escapeIdentifier(template)}` : ''}`,
        )
        .catch((err: { code?: string }) => {
          // Another process created it at the same moment.
          if (err.code !== '42P04' && err.code !== '23505') throw err;
        });
    }
  } finally {
    await client.end();
  }
}

/** The app's MikroORM configuration for an address, with what a process sets on top of it. */
export type OrmConfigOf = (clientUrl: string, overrides: Partial<Options>) => Options;

export interface OrmOpenOptions {
  onQuery?: (sql: string) => void;
  poolMax?: number;
  limits?: Limits;
  /** false: no statement or query timeout (migrations, which may take longer than a request). */
  requestTimeouts?: boolean;
  /**
   * DATABASE_SESSION_URL (src/lib/session-url.ts): where LISTEN, advisory locks held across
   * transactions and migrations go. When it differs from `url`, `url` is taken to reach a
   * transaction-mode pooler, and the pool keeps no session state.
   */
  sessionUrl?: string;
  /** DATABASE_PREPARED_STATEMENTS: named statements behind a pooler (off unless the pooler keeps them). */
  preparedStatements?: boolean;
}

/**
 * A MikroORM of `configOf` (the app's, src/db/orm.ts: lib knows no entities) whose pool never
 * waits without end: a connection (new, or free in the pool) comes within `dbConnectTimeoutMs`,
 * every statement stops after the request deadline (PostgreSQL's statement_timeout), and a
 * database that stops answering altogether fails the query a second later on the client side
 * (stuck-queries.ts). Those failures become a 503 (src/lib/errors.ts), and the pool reconnects by
 * itself once the database is back.
 */
export async function openOrmOf(
  configOf: OrmConfigOf,
  url: string,
  opts: OrmOpenOptions = {},
): Promise<MikroORM> {
  const limits = opts.limits ?? defaultLimits;
  const timeouts = opts.requestTimeouts !== false;
  const connection = connectionMode(url, opts.sessionUrl, opts.preparedStatements);
  const statementTimeoutMs = timeouts ? limits.requestDeadlineMs : 0;
  const orm = await MikroORM.init(
    configOf(url, {
      ...(opts.poolMax ? { pool: { min: 0, max: opts.poolMax } } : {}),
      driverOptions: {
        // Names the statements of writes inside transactions (src/db/named-statements.ts); behind a
        // pooler, sets the transaction's timeout instead of the session's.
        Client: poolClient(connection, statementTimeoutMs),
        connectionTimeoutMillis: limits.dbConnectTimeoutMs,
        // A startup parameter: a transaction pooler refuses it (PgBouncer: "unsupported startup
        // parameter"), and would not keep it for the next transaction anyway.
        ...(timeouts && !connection.pooled ? { statement_timeout: statementTimeoutMs } : {}),
        keepAlive: true,
      },
      // Tests count statements through this hook (the N+1 guard).
      ...(opts.onQuery
        ? { debug: ['query'], colors: false, logger: (msg: string) => opts.onQuery?.(msg) }
        : { debug: false }),
    }),
  );
  rememberConnection(orm, connection);
  // The pool's first connection is made here: a refused one fails the start with what to set.
  const pool = (await orm.em
    .getConnection()
    .getNativeClient()
    .catch(async (err: Error) => {
      await orm.close().catch(() => {});
      throw explained(err);
    })) as pg.Pool;
  // Not pg's query_timeout: see stuck-queries.ts for what its timer per query cost.
  if (timeouts) watchStuckQueries(pool, limits.requestDeadlineMs + 1000);
  return orm;
}

/** A pooler refuses the timeout startup parameter: say which setting is missing. */
function explained(err: Error): Error {
  if (/unsupported startup parameter/.test(err.message))
    return new Error(
      `${err.message}: DATABASE_URL looks like a transaction-mode pooler (PgBouncer). Set DATABASE_SESSION_URL to a direct or session-mode address of the same database; the pool then sets its timeouts per transaction (docs/scale.md).`,
    );
  return err;
}

/** Held while migrating, so processes starting together on a fresh database take turns. */
const MIGRATION_LOCK = 727_274_016;

/**
 * Applies pending migrations. The lock is the migrations' own transaction's (`pg_advisory_xact_lock`):
 * no session lock that a transaction pooler could hand, still held, to another client, and a
 * process that waited sees the migrations the first one committed. All or nothing, as before.
 */
export async function migrate(orm: MikroORM): Promise<string[]> {
  return orm.em.fork().transactional(async (em) => {
    await em.execute('select pg_advisory_xact_lock(?)', [MIGRATION_LOCK]);
    const done = await orm.migrator.up({ transaction: em.getTransactionContext() });
    return done.map((m) => m.name);
  });
}
