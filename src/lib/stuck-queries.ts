import type pg from 'pg';

/**
 * Ends a pool connection whose statement the database has not answered within `limitMs`: its
 * query fails ("Connection terminated", a 503) and the pool discards the client, so a database
 * that stops answering altogether cannot hold connections for ever. statement_timeout stops
 * statements in PostgreSQL; this is for a database (or network) that answers nothing at all.
 *
 * One sweep a fraction of `limitMs` apart, instead of pg's `query_timeout`: that arms a timer
 * for every query whose callback holds the query and, through it, its rows. With it, each
 * page's rows survived the young-generation collections and were promoted, and garbage
 * collection took more of a chat page's CPU than any code of ours (measured: 4.4 MB survived
 * each scavenge with it, 0.4 MB without; docs/performance.md). Our reading: timers that reach
 * the old generation keep what they point to alive after they are cleared, until the next
 * full collection.
 *
 * A statement is timed from the first sweep that sees it running, so it is failed between
 * `limitMs` and `limitMs` plus two sweep intervals after it started. The running statement is
 * read through pg's `_getActiveQuery` (pg is pinned; test/stuck-queries.test.ts holds it to this).
 */
export function watchStuckQueries(pool: pg.Pool, limitMs: number): void {
  const every = Math.max(25, Math.min(1000, Math.floor(limitMs / 4)));
  const clients = new Set<pg.Client>();
  const seen = new WeakMap<object, number>();
  let timer: NodeJS.Timeout | undefined;

  const sweep = () => {
    const now = Date.now();
    for (const client of clients) {
      const query = (client as unknown as Internals)._getActiveQuery();
      if (!query) continue;
      const since = seen.get(query);
      if (since === undefined) seen.set(query, now);
      else if (now - since >= limitMs) (client as unknown as Internals).connection.stream.destroy();
    }
  };
  // Watched while checked out at least once and still in the pool; the sweep runs only while
  // the pool has clients (an ended pool leaves no timer behind).
  pool.on('acquire', (client) => {
    clients.add(client);
    if (!timer) {
      timer = setInterval(sweep, every);
      timer.unref();
    }
  });
  pool.on('remove', (client) => {
    clients.delete(client);
    if (clients.size === 0 && timer) {
      clearInterval(timer);
      timer = undefined;
    }
  });
}

interface Internals {
  _getActiveQuery(): object | null | undefined;
  connection: { stream: { destroy(): void } };
}
