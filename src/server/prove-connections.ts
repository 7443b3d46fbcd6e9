import type { MikroORM } from '@mikro-orm/postgresql';
import type pg from 'pg';
import { logger } from '../lib/logger.ts';
import type { ProcessSecrets } from '../lib/secrets.ts';
import { isPooled } from '../lib/session-url.ts';
import type { EventRelay } from '../services/events/relay.ts';

/** How long an event announced at start may take to come back before the start is refused. */
export const EVENT_PATH_TIMEOUT_MS = 5000;

/**
 * Proves at start what a transaction-mode pooler silently breaks (docs/scale.md, Connections):
 * - the event path: a NOTIFY sent through the pool, as a write sends its event's, must reach the
 *   relay's LISTEN (DATABASE_SESSION_URL). A LISTEN made through a transaction pooler "succeeds"
 *   and then hears nothing, so subscribers would get no event without a word: the start is
 *   refused instead, naming the setting;
 * - the secrets: every service process on one database must sign and check media links and the
 *   network's callbacks with the same ones. Each relay connection (and each sending worker's
 *   presence) carries a hash of its process's secrets in its application_name (a killed process's
 *   connection goes with it, src/lib/process-tags.ts), and a process whose hash differs from
 *   another live one's refuses to start, naming the settings;
 * - behind a pooler, statements outside a transaction have no timeout of the service's (it cannot
 *   be a startup parameter there): the role's or database's `statement_timeout` applies, and its
 *   absence is said at start.
 */
export async function proveConnections(
  orm: MikroORM,
  relay: EventRelay,
  secrets: ProcessSecrets,
): Promise<void> {
  const pool = (await orm.em.getConnection().getNativeClient()) as pg.Pool;
  const heard = await relay.proveEventPath(
    (channel, payload) => pool.query('select pg_notify($1, $2)', [channel, payload]),
    EVENT_PATH_TIMEOUT_MS,
  );
  if (!heard)
    throw new Error(
      `Live events cannot work: a NOTIFY sent through DATABASE_URL did not reach the LISTEN on DATABASE_SESSION_URL within ${EVENT_PATH_TIMEOUT_MS} ms. ` +
        'When DATABASE_URL goes through a transaction-mode pooler (PgBouncer pool_mode=transaction), set DATABASE_SESSION_URL ' +
        'to a direct or session-mode address of the same database (docs/scale.md).',
    );
  await proveSecretsAgree(relay, secrets);
  if (!isPooled(orm)) return;
  const { rows } = await pool.query<{ statement_timeout: string }>('show statement_timeout');
  if (rows[0]?.statement_timeout === '0')
    logger.warn(
      'DATABASE_URL goes through a pooler and the database role has no statement_timeout: statements outside a transaction ' +
        'run without one (transactions set theirs). Set one with ALTER ROLE … SET statement_timeout (docs/scale.md).',
    );
}

/**
 * Refuses a start whose secrets differ from another live process's (src/lib/process-tags.ts):
 * `tagged` is this process's own tagged connection (an instance's relay, a worker's presence).
 */
export async function proveSecretsAgree(
  tagged: { otherTags(): Promise<string[]> },
  secrets: ProcessSecrets,
): Promise<void> {
  const others = (await tagged.otherTags()).filter((tag) => tag !== secrets.fingerprint);
  if (!others.length) return;
  throw new Error(
    secrets.configured
      ? 'Another service process on this database signs media links and network callbacks with other secrets: set the same ROOT_SECRET (or NETWORK_SECRET and MEDIA_LINK_SECRET) on every process, and restart the others (docs/scale.md).'
      : 'Another service process serves this database: when several do, set the same ROOT_SECRET (or NETWORK_SECRET and MEDIA_LINK_SECRET) on every one; without them each process has random ones, and a media link or network callback signed by one is refused by another (docs/scale.md).',
  );
}
