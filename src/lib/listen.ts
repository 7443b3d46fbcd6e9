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

export async function listen(opts: ListenOptions): Promise<Listening> {
  let closed = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  const probes = new Map<string, () => void>();

  async function connect(again: boolean): Promise<void> {
    const c = new pg.Client({ connectionString: opts.databaseUrl, application_name: opts.name });
    c.on('notification', (n) => {
      const probe = n.payload ? probes.get(n.payload) : undefined;
      if (probe) probe();
      else opts.onNotify(n.payload || undefined);
    });
    c.on('error', (err) => {
      logger.warn({ err }, `${opts.name}: lost its connection; reconnecting`);
      reconnect();
    });
    await c.connect();
    await c.query(`listen ${pg.escapeIdentifier(opts.channel)}`);
    client = c;
    opts.onListening?.(c, again);
  }

  function reconnect() {
    const old = client;
    client = undefined;
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
      const c = client;
      client = undefined;
      await c?.end().catch(() => {});
    },
  };
}
