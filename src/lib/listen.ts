import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { logger } from './logger.ts';

/**
 * A dedicated connection LISTENing on one channel, made again a second after it drops (a pooled
 * connection would lose the LISTEN when returned). The one mechanism behind the key-change
 * listener (src/auth/key-changes.ts) and the event relay (src/services/events/relay.ts).
 */
export interface ListenOptions {
  databaseUrl: string;
  channel: string;
  /** The connection's application_name, and the name in log lines. */
  name: string;
  onNotify(payload: string | undefined): void;
  /** LISTEN is in place: `again` after a drop, when whatever was announced meanwhile was missed. */
  onListening?(client: pg.Client, again: boolean): void;
  /** The connection dropped: nothing is heard until `onListening` says again. */
  onLost?(): void;
  /** How often the connection proves it still listens (HEARTBEAT_MS; tests shorten it). */
  heartbeatMs?: number;
}

export interface Listening {
  /** The connection, while it is up (the relay reads on it). */
  readonly client: pg.Client | undefined;
  /**
   * Whether a NOTIFY on the channel that `notify` sends (through another connection: the pool's,
   * which may go through a pooler) comes back to this LISTEN within `timeoutMs`. The probe's
   * payload is not passed on to `onNotify`.
   */
  roundTrip(
    notify: (channel: string, payload: string) => Promise<unknown>,
    timeoutMs: number,
  ): Promise<boolean>;
  close(): Promise<void>;
}

/** How often a listening connection proves it still listens, and how long the proof may take. */
const HEARTBEAT_MS = 10_000;
const HEARTBEAT_TIMEOUT_MS = 5_000;

export async function listen(opts: ListenOptions): Promise<Listening> {
  let closed = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  const probes = new Map<string, () => void>();

  async function connect(again: boolean): Promise<void> {
    // TCP keepalives both ways: an idle connection that a NAT or firewall dropped is found out,
    // and PostgreSQL lets go of a vanished process's backend (and its application_name, which
    // other processes read at start: src/server/prove-connections.ts) within about 25 s.
    const c = new pg.Client({
      connectionString: opts.databaseUrl,
      application_name: opts.name,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
    });
    c.on('notification', (n) => {
      const probe = n.payload ? probes.get(n.payload) : undefined;
      if (probe) probe();
      else opts.onNotify(n.payload || undefined);
    });
    c.on('error', (err) => {
      logger.warn({ err }, `${opts.name}: lost its connection; reconnecting`);
      reconnect(c);
    });
    try {
      await c.connect();
      await c.query(
        `set tcp_keepalives_idle = 10; set tcp_keepalives_interval = 5; set tcp_keepalives_count = 3; listen ${pg.escapeIdentifier(opts.channel)}`,
      );
    } catch (err) {
      c.removeAllListeners('error');
      c.on('error', () => {});
      await c.end().catch(() => {});
      throw err;
    }
    if (closed) {
      await c.end().catch(() => {});
      return;
    }
    client = c;
    beat(c);
    opts.onListening?.(c, again);
  }

  /**
   * Proves, every HEARTBEAT_MS, that the connection answers and still listens (a LISTEN lost
   * without a word would silence this process's subscribers): otherwise it is made again.
   */
  function beat(c: pg.Client) {
    heartbeat = setTimeout(async () => {
      if (closed || client !== c) return;
      let timer: NodeJS.Timeout | undefined;
      const listening = await Promise.race([
        c
          .query<{ ok: boolean }>(
            'select exists (select 1 from pg_listening_channels() as l where l = $1) as ok',
            [opts.channel],
          )
          .then(
            (r) => r.rows[0]?.ok === true,
            () => false,
          ),
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(false), HEARTBEAT_TIMEOUT_MS);
        }),
      ]);
      clearTimeout(timer);
      if (closed || client !== c) return;
      if (listening) beat(c);
      else {
        logger.warn(`${opts.name}: its connection stopped listening; reconnecting`);
        reconnect(c);
      }
    }, opts.heartbeatMs ?? HEARTBEAT_MS);
    heartbeat.unref();
  }

  /** Drops `target` (the current connection) and makes another a second later. */
  function reconnect(target?: pg.Client) {
    if (target && target !== client) return;
    const old = client;
    client = undefined;
    clearTimeout(heartbeat);
    old?.end().catch(() => {});
    opts.onLost?.();
    if (closed || retry) return;
    retry = setTimeout(() => {
      retry = undefined;
      if (!closed) connect(true).catch(() => reconnect());
    }, 1000);
    retry.unref();
  }

  await connect(false);
  return {
    get client() {
      return client;
    },
    async roundTrip(notify, timeoutMs) {
      // Never a number after the colon: other listeners on the channel may parse their payloads.
      const payload = `probe:n${randomBytes(8).toString('hex')}`;
      let timer: NodeJS.Timeout | undefined;
      const heard = new Promise<boolean>((resolve) => {
        probes.set(payload, () => resolve(true));
        timer = setTimeout(() => resolve(false), timeoutMs);
      });
      try {
        await notify(opts.channel, payload);
        return await heard;
      } finally {
        clearTimeout(timer);
        probes.delete(payload);
      }
    },
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      clearTimeout(heartbeat);
      const c = client;
      client = undefined;
      await c?.end().catch(() => {});
    },
  };
}
