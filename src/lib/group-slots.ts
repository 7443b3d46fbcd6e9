import type pg from 'pg';
import { type Listening, listen } from './listen.ts';
import { logger } from './logger.ts';

/**
 * A cap on the jobs of one group (a webhook subscription) running at once, across every process,
 * that holds whatever the queue library does (issue 25). pg-boss 12.38's `groupConcurrency` reads a
 * group's active count without a lock, so concurrent fetches each take the group's whole allowance
 * (16 at once were seen where 4 were allowed), and a killed worker's jobs keep counting until its
 * heartbeat expires (a minute or more).
 *
 * A slot is a PostgreSQL session advisory lock, `(lockClass + slot, group key)`, held by one
 * dedicated connection per process (the lease) for as long as the job that took it runs. So:
 * - the cap is the database's: two processes cannot hold one slot, whatever their fetches saw;
 * - a process that dies (SIGKILL included) loses its connection, and PostgreSQL frees its slots as
 *   soon as the socket closes, before any heartbeat has expired (a vanished machine's hold is
 *   left to server-side TCP keepalives, about 25 s as set below: configured, not tested);
 * - which groups are full is read from `pg_locks`, so a fetch skips them instead of taking their
 *   jobs and giving them back.
 * The lease connection also LISTENs for the queue's wake-ups (src/lib/listen.ts), so a process
 * keeps one extra connection, not two. When it drops, every slot of this process is gone at once:
 * attempts under way go on (at most a brief overshoot of the cap), none is taken until it is back.
 */
export interface GroupCap {
  /** Jobs of one group running at once, across every process. */
  perGroup: number;
  /** The advisory lock class of slot 0 (slot s is class + s; the second key is the group's key). */
  lockClass: number;
  /** The group's lock key (an int4) from pg-boss's group id, and back. */
  keyOf(groupId: string): number;
  groupOf(key: number): string;
}

/** A slot this process holds: released once, on the connection generation that took it. */
export interface Slot {
  key: number;
  slot: number;
  generation: number;
}

export interface SlotLease {
  /**
   * Runs `fn` with the lease connection, one caller at a time (the claim is a sequence of
   * statements on one session, and this process's own bookkeeping follows it). `undefined` while
   * the connection is down.
   */
  exclusive<T>(fn: (session: SlotSession) => Promise<T>): Promise<T | undefined>;
  /** Gives a slot back (batched: done before the next claim, or at once when none is coming). */
  release(slot: Slot): void;
  close(): Promise<void>;
}

/** The lease connection's operations, valid inside `exclusive`. */
export interface SlotSession {
  readonly client: pg.Client;
  /** Gives back the slots released so far. */
  flush(): Promise<void>;
  /** The groups whose every slot is held, by any process (the slots released so far given back first). */
  fullGroups(): Promise<string[]>;
  /**
   * Takes up to `wanted.get(group)` free slots of each group; answers the slots taken, by group.
   * Never tries a slot this process already holds (session locks are reentrant: a second try
   * would "succeed" on the same slot).
   */
  acquire(wanted: ReadonlyMap<string, number>): Promise<Map<string, Slot[]>>;
}

export async function startSlotLease(opts: {
  databaseUrl: string;
  cap: GroupCap;
  /** What the connection also listens for: the queue's NOTIFY channel. */
  channel: string;
  name: string;
  onNotify(payload: string | undefined): void;
  /** The connection is back (after a drop): wake the pollers. */
  onReady(): void;
}): Promise<SlotLease> {
  const { cap } = opts;
  let generation = 0;
  let client: pg.Client | undefined;
  /** This process's slots of the current generation, by group key. */
  let held = new Map<number, Set<number>>();
  let pending: Slot[] = [];
  let turn: Promise<unknown> = Promise.resolve();
  let flushQueued = false;

  const listening: Listening = await listen({
    databaseUrl: opts.databaseUrl,
    channel: opts.channel,
    name: opts.name,
    onNotify: opts.onNotify,
    onListening(c, again) {
      generation++;
      held = new Map();
      pending = [];
      // Server-side keepalives: a machine that vanishes without closing its sockets should free
      // its slots within about 25 s (10 s idle, then 3 probes 5 s apart; not tested: the tests kill
      // processes, whose sockets close at once). Ignored on Unix sockets.
      c.query(
        'set tcp_keepalives_idle = 10; set tcp_keepalives_interval = 5; set tcp_keepalives_count = 3',
      ).catch((err) => logger.warn({ err }, `${opts.name}: keepalive settings refused`));
      client = c;
      if (again) opts.onReady();
    },
    onLost() {
      // Every slot went with the connection (PostgreSQL freed them when it closed).
      client = undefined;
      generation++;
      held = new Map();
      pending = [];
    },
  });

  const classes = `${cap.lockClass} and ${cap.lockClass + cap.perGroup - 1}`;
  const fullSql = `select l.objid::int8 as "key" from pg_locks as l
     where l.locktype = 'advisory' and l.granted and l.objsubid = 2
       and l.database = (select oid from pg_database where datname = current_database())
       and l.classid::int8 between ${classes}
     group by l.objid having count(*) >= ${cap.perGroup}`;

  /**
   * The statement giving back the released slots of this generation, or null: inlined integers
   * (no parameters), so that it can share a round trip with the statement after it.
   */
  function unlockPending(): string | null {
    const mine = pending.filter((s) => s.generation === generation);
    pending = [];
    if (!mine.length) return null;
    for (const s of mine) held.get(s.key)?.delete(s.slot);
    const ints = (xs: number[]) => `'{${xs.map((x) => Math.trunc(x)).join(',')}}'::int[]`;
    return `select count(pg_advisory_unlock(${cap.lockClass} + t.slot, t.key)) from unnest(${ints(mine.map((s) => s.key))}, ${ints(mine.map((s) => s.slot))}) as t("key", "slot")`;
  }

  function exclusive<T>(fn: (session: SlotSession) => Promise<T>): Promise<T | undefined> {
    const run = turn.then(async () => {
      // Releases queued from here on need a flush of their own.
      flushQueued = false;
      const c = client;
      if (!c) return undefined;
      const gen = generation;
      const session: SlotSession = {
        client: c,
        async flush() {
          const unlock = unlockPending();
          if (unlock) await c.query(unlock);
        },
        async fullGroups() {
          // The slots given back first, in the same round trip, so that they count as free.
          const unlock = unlockPending();
          const res = (await c.query(unlock ? `${unlock}; ${fullSql}` : fullSql)) as unknown as
            | pg.QueryResult
            | pg.QueryResult[];
          const rows = Array.isArray(res) ? (res[1] as pg.QueryResult).rows : res.rows;
          return rows.map((r) => cap.groupOf(Number(r.key)));
        },
        async acquire(wanted) {
          const keys: number[] = [];
          const slots: number[] = [];
          for (const group of wanted.keys()) {
            const key = cap.keyOf(group);
            const mine = held.get(key);
            for (let s = 0; s < cap.perGroup; s++) {
              if (mine?.has(s)) continue;
              keys.push(key);
              slots.push(s);
            }
          }
          const res = await c.query(
            'select t.key, t.slot from unnest($2::int[], $3::int[]) with ordinality as t("key", "slot", "n") where pg_try_advisory_lock($1::int + t.slot, t.key) order by t.n',
            [cap.lockClass, keys, slots],
          );
          const taken = new Map<string, Slot[]>();
          const extra: Slot[] = [];
          for (const r of res.rows as { key: number; slot: number }[]) {
            const group = cap.groupOf(r.key);
            const list = taken.get(group) ?? [];
            const slot = { key: r.key, slot: r.slot, generation: gen };
            if (list.length < (wanted.get(group) ?? 0)) {
              list.push(slot);
              taken.set(group, list);
              const mine = held.get(r.key) ?? new Set<number>();
              held.set(r.key, mine.add(r.slot));
            } else extra.push(slot);
          }
          // Every free slot of a group was tried at once; the ones beyond what the batch needs go back now.
          if (extra.length)
            await c.query(
              'select count(pg_advisory_unlock($1::int + t.slot, t.key)) from unnest($2::int[], $3::int[]) as t("key", "slot")',
              [cap.lockClass, extra.map((s) => s.key), extra.map((s) => s.slot)],
            );
          return taken;
        },
      };
      return fn(session);
    });
    // The next caller waits for this one to end, whatever its outcome.
    turn = run.catch(() => {});
    return run;
  }

  return {
    exclusive,
    release(slot) {
      if (slot.generation !== generation) return;
      pending.push(slot);
      if (flushQueued) return;
      flushQueued = true;
      // Given back without waiting for the next claim: a full group's held-back jobs may run now.
      void exclusive((session) => session.flush()).then(opts.onReady, (err) =>
        logger.warn({ err }, `${opts.name}: giving slots back failed`),
      );
    },
    async close() {
      await turn;
      client = undefined;
      await listening.close();
    },
  };
}
