import type { MikroORM } from '@mikro-orm/postgresql';

/**
 * How a process reaches PostgreSQL (docs/scale.md, Connections). Most hosted PostgreSQL is
 * reached through a transaction-mode pooler (PgBouncer), which hands a server connection to a
 * client for one transaction only: session state (LISTEN, a session advisory lock, a `SET`, a
 * startup parameter, a prepared statement) is lost, or worse, handed to another client.
 *
 * So the process has two addresses:
 * - `DATABASE_URL`: every request's statements, possibly through the pooler; the pool keeps no
 *   session state when the two differ (timeouts per transaction, statements unnamed unless
 *   `DATABASE_PREPARED_STATEMENTS` says the pooler keeps them);
 * - `DATABASE_SESSION_URL` (default: `DATABASE_URL`): a few dedicated connections that need a
 *   session of their own: the LISTENs (events, key changes, the queue's wake-ups), the delivery
 *   slots' advisory locks, the migration lock and the migrations.
 */
export interface ConnectionMode {
  sessionUrl: string;
  /** The pool's address is not the session's: assume a transaction-mode pooler in between. */
  pooled: boolean;
  /** Named (server-side prepared) statements on the pool. */
  prepared: boolean;
}

export function connectionMode(
  url: string,
  sessionUrl?: string,
  preparedStatements?: boolean,
): ConnectionMode {
  const session = sessionUrl || url;
  const pooled = session !== url;
  return { sessionUrl: session, pooled, prepared: preparedStatements ?? !pooled };
}

const modes = new WeakMap<MikroORM, ConnectionMode>();

export function rememberConnection(orm: MikroORM, mode: ConnectionMode): void {
  modes.set(orm, mode);
}

/** Where this ORM's process opens the connections that need a session. */
export function sessionUrlOf(orm: MikroORM): string {
  return modes.get(orm)?.sessionUrl ?? orm.config.get('clientUrl');
}

/** Whether this ORM's pool goes through a transaction-mode pooler. */
export function isPooled(orm: MikroORM): boolean {
  return modes.get(orm)?.pooled ?? false;
}
