import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { logger } from '../lib/logger.ts';

/**
 * A key's websockets counted across every instance on the database (issue 35; docs/limits.md,
 * Websockets): WS_MAX_PER_KEY holds for the cluster, not per process. Through a transaction-mode
 * pooler too: nothing here rests on session state, each statement is a transaction of its own.
 *
 * Table `websocket_hold` (migrations/Migration20261205000010WebsocketHolds.ts): one row per clinic,
 * key and instance, the sockets of the key that instance holds and its last heartbeat (`seen_at`,
 * the database's clock, so the instances' clocks do not matter).
 * - Admission (`websocket_admit`, one statement, one round trip): the key's admissions take turns
 *   (a transaction-scoped advisory lock), rows of dead instances are deleted, the live ones counted,
 *   and this instance's row gains the socket when the count is below the cap.
 * - Release, when the socket closes: this instance's row loses it.
 * - Heartbeat, every third of the instance timeout: this instance writes its rows again with its
 *   own counts (what it holds is the truth, so a lost release, a table emptied by a crash, or rows
 *   deleted while this instance could not reach the database are repaired at the next one), drops
 *   the rows of keys it no longer holds, and deletes expired rows of other instances.
 * - A killed instance (SIGKILL) stops heartbeating: its rows stop counting, and are deleted, once
 *   their heartbeat is older than the instance timeout (WS_INSTANCE_TIMEOUT_MS, 15 s by default):
 *   at most that long after the kill.
 * - Should the database not answer an admission, the process's own cap stands in (the socket was
 *   already checked against it): a database fault never lifts the limit, it only narrows it to
 *   one process's, as the rate limiter's insurance does.
 *
 * The heartbeat writes this process's counts as they are, so it runs while no admission or release
 * of this process is under way (they wait for it, about a millisecond every few seconds).
 */
export class WebsocketHolds {
  /** This process's instance id: its rows in websocket_hold. */
  readonly instanceId = randomUUID();
  /** Sockets this instance holds per key (clinic id, key id): what its rows must say. */
  private readonly held = new Map<string, { clinicId: number; apiKeyId: number; sockets: number }>();
  private readonly inFlight = new Set<Promise<unknown>>();
  private heartbeatUnderWay: Promise<void> | null = null;
  private readonly timer: NodeJS.Timeout;
  /** After close: no more statements but the last delete. */
  private closed = false;
  /** Whether the last heartbeat found nothing to write (no rows of ours can exist). */
  private idle = true;
  private lastFault = 0;

  private readonly pool: () => Promise<pg.Pool>;
  private readonly cap: number;
  private readonly timeoutMs: number;

  constructor(opts: { pool: () => Promise<pg.Pool>; cap: number; instanceTimeoutMs: number }) {
    this.pool = opts.pool;
    this.cap = opts.cap;
    this.timeoutMs = opts.instanceTimeoutMs;
    this.timer = setInterval(
      () => {
        this.heartbeat().catch((err) => this.fault(err, 'websocket heartbeat failed'));
      },
      Math.max(100, Math.floor(this.timeoutMs / 3)),
    );
    this.timer.unref();
  }

  /**
   * Takes a place among the key's sockets on every instance: false when the key holds its cap
   * already. The caller releases it (`release`) when the socket closes, and only if this said true.
   */
  admit(clinicId: number, apiKeyId: number): Promise<boolean> {
    return this.exclusive(async () => {
      if (this.closed) return false;
      let admitted: boolean;
      try {
        const pool = await this.pool();
        const { rows } = await pool.query<{ held: number }>(
          'select websocket_admit($1, $2, $3, $4, $5) as held',
          [clinicId, apiKeyId, this.instanceId, this.cap, this.timeoutMs],
        );
        admitted = (rows[0]?.held ?? 0) < this.cap;
      } catch (err) {
        this.fault(
          err,
          'websocket admission not shared: the database did not answer; this process’s cap applies',
        );
        admitted = true;
      }
      if (admitted) this.count(clinicId, apiKeyId, 1);
      return admitted;
    });
  }

  /** A socket `admit` took a place for has closed. */
  release(clinicId: number, apiKeyId: number): Promise<void> {
    return this.exclusive(async () => {
      // Here, not before: a heartbeat writes the counts while no admission or release is under way.
      this.count(clinicId, apiKeyId, -1);
      if (this.closed) return;
      try {
        const pool = await this.pool();
        await pool.query(
          'update websocket_hold set sockets = sockets - 1 where clinic_id = $1 and api_key_id = $2 and instance_id = $3 and sockets > 0',
          [clinicId, apiKeyId, this.instanceId],
        );
      } catch (err) {
        // The next heartbeat writes the count as it is.
        this.fault(err, 'websocket release not written; the next heartbeat repairs it');
      }
    });
  }

  /** Writes this instance's rows as they are (a heartbeat); also run by the timer. */
  async heartbeat(): Promise<void> {
    if (this.closed || this.heartbeatUnderWay) return;
    const done = (async () => {
      await Promise.allSettled([...this.inFlight]);
      const rows = [...this.held.values()];
      if (rows.length === 0 && this.idle) return;
      const pool = await this.pool();
      await pool.query(
        `with mine as (
           select * from unnest($2::int[], $3::int[], $4::int[]) as m(clinic_id, api_key_id, sockets)
         ), gone as (
           delete from websocket_hold h where h.instance_id = $1
             and not exists (select 1 from mine m where m.clinic_id = h.clinic_id and m.api_key_id = h.api_key_id)
         ), expired as (
           delete from websocket_hold where ctid in (
             select ctid from websocket_hold
             where instance_id <> $1 and seen_at < now() - make_interval(secs => $5 / 1000.0)
             for update skip locked)
         )
         insert into websocket_hold (clinic_id, api_key_id, instance_id, sockets, seen_at)
         select clinic_id, api_key_id, $1, sockets, now() from mine
         on conflict (clinic_id, api_key_id, instance_id)
         do update set sockets = excluded.sockets, seen_at = excluded.seen_at`,
        [
          this.instanceId,
          rows.map((r) => r.clinicId),
          rows.map((r) => r.apiKeyId),
          rows.map((r) => r.sockets),
          this.timeoutMs,
        ],
      );
      this.idle = rows.length === 0;
    })();
    this.heartbeatUnderWay = done;
    try {
      await done;
    } finally {
      this.heartbeatUnderWay = null;
    }
  }

  /** Stops the heartbeat and deletes this instance's rows: its sockets no longer count. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    this.closed = true;
    await this.heartbeatUnderWay?.catch(() => {});
    await Promise.allSettled([...this.inFlight]);
    const nothingHeld = this.idle && this.held.size === 0;
    this.held.clear();
    if (nothingHeld) return;
    try {
      const pool = await this.pool();
      await pool.query('delete from websocket_hold where instance_id = $1', [this.instanceId]);
    } catch (err) {
      this.fault(err, 'websocket holds not deleted; they expire with the instance timeout');
    }
  }

  private count(clinicId: number, apiKeyId: number, by: number) {
    const id = `${clinicId}:${apiKeyId}`;
    const row = this.held.get(id) ?? { clinicId, apiKeyId, sockets: 0 };
    row.sockets += by;
    if (row.sockets > 0) this.held.set(id, row);
    else this.held.delete(id);
    if (by > 0) this.idle = false;
  }

  /** Runs `work` once no heartbeat is under way; a heartbeat waits for the work under way. */
  private async exclusive<T>(work: () => Promise<T>): Promise<T> {
    while (this.heartbeatUnderWay) await this.heartbeatUnderWay.catch(() => {});
    const run = work();
    this.inFlight.add(run);
    try {
      return await run;
    } finally {
      this.inFlight.delete(run);
    }
  }

  /** A database fault, logged at most once a minute. */
  private fault(err: unknown, message: string) {
    const now = Date.now();
    if (now - this.lastFault < 60_000) return;
    this.lastFault = now;
    logger.warn({ err }, message);
  }
}
