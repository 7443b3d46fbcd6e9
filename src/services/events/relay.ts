import pg from 'pg';
import { logger } from '../../lib/logger.ts';
import type { EventHub, LiveEvent } from './hub.ts';

/** The channel the outbox trigger announces on (migrations/Migration20261129000000EventNotify.ts). */
export const EVENT_CHANNEL = 'event_recorded';

/** Ids remembered to publish each event once (a reconnect's catch-up overlaps what was heard). */
const REMEMBERED = 10_000;

/** Most rows one catch-up after a reconnect reads. */
const CATCH_UP = 10_000;

interface Row {
  id: number;
  clinic_id: number;
  type: string;
  scope: string;
  data: Record<string, unknown>;
  created_ms: number;
}

export interface EventRelay {
  close(): Promise<void>;
}

/**
 * Relays committed events to this process's subscribers: one dedicated connection LISTENs on
 * the outbox's channel (a pooled one would lose the LISTEN when returned), ids heard within one
 * tick are read back from the outbox in one query, and each row is published to the hub once.
 * If the connection drops, it is made again, and the events committed meanwhile (ids above the
 * highest one published) are read and published, so a short outage loses nothing.
 */
export async function startEventRelay(opts: { databaseUrl: string; hub: EventHub }): Promise<EventRelay> {
  let closed = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  let pending: number[] = [];
  let flushing: Promise<void> | null = null;
  let highest = 0;
  const published = new Set<number>();

  /**
   * Outbox rows of every clinic (the relay serves them all), oldest first, read on the relay's own
   * connection: no pooled connection taken from requests, no statement among a request's.
   */
  async function rowsWhere(condition: string, params: unknown[], limit: number): Promise<LiveEvent[]> {
    if (!client) throw new Error('event relay not connected');
    const { rows } = await client.query<Row>(
      `select "id", "clinic_id", "type", "scope", "data", (extract(epoch from "created_at") * 1000)::float8 as "created_ms"
         from "event" where ${condition} order by "id" limit ${limit}`,
      params,
    );
    return rows.map((r) => ({
      id: Number(r.id),
      clinicId: Number(r.clinic_id),
      type: r.type,
      scope: r.scope,
      data: r.data,
      createdAt: new Date(Math.round(Number(r.created_ms))),
    }));
  }

  function publish(rows: LiveEvent[]) {
    for (const row of rows) {
      if (published.has(row.id)) continue;
      published.add(row.id);
      if (published.size > REMEMBERED) published.delete(published.values().next().value as number);
      if (row.id > highest) highest = row.id;
      opts.hub.publish(row);
    }
  }

  function schedule() {
    flushing ??= new Promise<void>((resolve) => setImmediate(resolve))
      .then(async () => {
        const ids = pending;
        pending = [];
        publish(await rowsWhere('"id" = any($1::int[])', [ids], ids.length));
      })
      .catch((err) => logger.warn({ err }, 'event relay could not read events back'))
      .finally(() => {
        flushing = null;
        if (pending.length) schedule();
      });
  }

  function heard(payload: string | undefined) {
    const id = Number(payload?.slice(payload.indexOf(':') + 1));
    if (!Number.isSafeInteger(id) || published.has(id)) return;
    pending.push(id);
    schedule();
  }

  async function connect(): Promise<void> {
    const c = new pg.Client({
      connectionString: opts.databaseUrl,
      application_name: 'clinic-gateway events',
    });
    c.on('notification', (n) => heard(n.payload));
    c.on('error', (err) => {
      logger.warn({ err }, 'event relay lost its connection; reconnecting');
      reconnect();
    });
    await c.connect();
    await c.query(`listen ${EVENT_CHANNEL}`);
    client = c;
    // Committed while no one listened (after a drop): read now that later ones will be heard.
    if (highest > 0) publish(await rowsWhere('"id" > $1', [highest], CATCH_UP));
  }

  function reconnect() {
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
  // Where a reconnect's catch-up starts: the newest row at start, not the beginning.
  const { rows } = await (client as pg.Client).query<{ max: number | null }>(
    'select max("id") as "max" from "event"',
  );
  highest = Math.max(highest, Number(rows[0]?.max ?? 0));
  return {
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      await client?.end().catch(() => {});
      await flushing;
    },
  };
}
