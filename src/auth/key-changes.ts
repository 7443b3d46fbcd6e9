import pg from 'pg';
import { logger } from '../lib/logger.ts';
import { forgetKey, KEY_CHANGES_CHANNEL } from './keys.ts';

/**
 * LISTENs for key changes (created, revoked) announced by any process on this database, the CLI
 * included, and evicts them from this process's key cache. A dedicated connection, because a
 * pooled one would lose the LISTEN when returned. If it drops, the cache is cleared, the
 * connection is re-established, and the cache is cleared again once LISTEN is back.
 */
export async function listenForKeyChanges(databaseUrl: string): Promise<{ close(): Promise<void> }> {
  let closed = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;

  async function connect(): Promise<void> {
    const c = new pg.Client({
      connectionString: databaseUrl,
      application_name: 'clinic-gateway key changes',
    });
    c.on('notification', (n) => forgetKey(n.payload || undefined));
    c.on('error', (err) => {
      logger.warn({ err }, 'key-change listener lost its connection; reconnecting');
      reconnect();
    });
    await c.connect();
    await c.query(`listen ${KEY_CHANGES_CHANNEL}`);
    client = c;
    // Changes announced while no one listened were missed, and verdicts cached meanwhile may be
    // stale: forget everything now that every later change will be heard.
    forgetKey();
  }

  function reconnect() {
    forgetKey();
    const old = client;
    client = undefined;
    old?.end().catch(() => {});
    if (closed || retry) return;
    retry = setTimeout(() => {
      retry = undefined;
      if (!closed) connect().catch(() => reconnect());
    }, 1000);
    retry.unref();
  }

  await connect();
  return {
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      await client?.end().catch(() => {});
    },
  };
}
