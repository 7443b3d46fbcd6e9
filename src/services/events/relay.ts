import type { EntityManager } from '@mikro-orm/postgresql';
import type pg from 'pg';
import { readAfterId } from '../../db/list.ts';
import { Event } from '../../entities/index.ts';
import { listen } from '../../lib/listen.ts';
import { logger } from '../../lib/logger.ts';
import { otherProcessTags, taggedName } from '../../lib/process-tags.ts';
import type { EventHub, LiveEvent } from './hub.ts';

/** The channel the outbox trigger announces on (migrations/Migration20261129000000EventNotify.ts). */
export const EVENT_CHANNEL = 'event_recorded';

/** What the outbox trigger announces: `<clinic id>:<event id>`. */
const EVENT_PAYLOAD = /^\d+:(\d+)$/;

/** The application_name of a relay connection without a tag (src/lib/process-tags.ts has the tagged one). */
const RELAY_NAME = 'clinic-gateway events';

/** Most rows one read publishes; a longer catch-up reads again from where it stopped. */
const PAGE = 1_000;

/** The wait for writes still in flight polls at 1, 2, 4 … ms, never slower than this. */
const MAX_POLL_MS = 20;

/**
 * With no subscriber in this process, the watermark moves at most this often, and a subscriber
 * arriving wakes the relay at once: under a burst of writes, an advance per tick (the writers in
 * flight read and polled, then the rows) was 13 % of the app server's CPU in the booking bench,
 * spent for no one (issue 38). A subscription without `after` still starts where it subscribed
 * (EventHub's `fromNow`), and one with `after` replays up to the older watermark and gets the
 * rest live: the same events as with an advance per tick.
 */
export const IDLE_ADVANCE_MS = 100;

/** What a relayed event is read with: its clinic, its envelope's columns and its scope. */
const relayRead = Object.freeze({
  fields: Object.freeze(['clinic', 'type', 'scope', 'createdAt', 'data']),
  joins: Object.freeze({}),
});

interface Row {
  id: number;
  clinic: { id: number };
  type: string;
  scope: string;
  data: Record<string, unknown>;
  /** ISO text, as every lean read answers a point in time. */
  createdAt: string;
}

export interface EventRelay {
  /**
   * Whether an event announced through `notify` (the pool's connection, as writes announce theirs)
   * reaches this relay's LISTEN within `timeoutMs`: src/server/start.ts refuses to start otherwise.
   */
  proveEventPath(
    notify: (channel: string, payload: string) => Promise<unknown>,
    timeoutMs: number,
  ): Promise<boolean>;
  /** The tags of the other service processes' relays on this database (every live one has its connection). */
  otherTags(): Promise<string[]>;
  close(): Promise<void>;
}

/**
 * The newest committed event id (M), and the transactions that may still commit an event with a
 * lower id: ids come from a sequence at INSERT time, so an id below M not yet visible belongs to
 * a transaction that was writing to `event` when M was read (ids taken later are above M). Such a
 * transaction holds `event`'s RowExclusiveLock (taken before the id is) until it ends, so the
 * holders of that lock in this database, read after the statement's snapshot, are a superset of
 * them. By virtual transaction id, not by xid: a snapshot's in-progress list leaves out
 * transactions whose xid is above its xmax, though they may hold a lower event id (one that took
 * its xid later but its event id earlier), and a transaction has a virtual id from its start.
 * pg_locks, not pg_stat_activity: it shows every role's locks.
 */
const EVENT_WRITERS = `select distinct r.virtualtransaction from pg_locks r
  where r.locktype = 'relation' and r.mode = 'RowExclusiveLock' and r.granted
    and r.database = (select oid from pg_database where datname = current_database())
    and r.relation = '"event"'::regclass and r.pid <> pg_backend_pid()`;

const SNAPSHOT = `select coalesce((select max("id") from "event"), 0)::int8 as "max",
  array(${EVENT_WRITERS}) as "writers"`;

/**
 * Which of those are still running: a transaction releases its locks after its commit became
 * visible to new snapshots, so one gone from the list has committed (or aborted) for every read
 * that follows.
 */
const STILL_RUNNING = `select array(${EVENT_WRITERS} and r.virtualtransaction = any($1::text[])) as "writers"`;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/**
 * Relays committed events to this process's subscribers, in ascending id order with no gap: one
 * dedicated connection LISTENs on the outbox's channel (a pooled one would lose the LISTEN when
 * returned). What it hears within a tick triggers one advance: the newest committed id M and the
 * writes that could still commit a lower id are read in one statement, those writes are waited
 * for (none, usually), then the rows above the last published id up to M are read and published
 * in order, and M becomes the hub's watermark. Publishing an id before a lower one commits would
 * let a client that saw it resume (`after:`) past the lower one for ever.
 * If the connection drops, it is made again, and the same advance publishes what was committed
 * meanwhile, so a short outage loses nothing.
 */
export async function startEventRelay(opts: {
  databaseUrl: string;
  /** The ORM's root EntityManager: the outbox's read is built from its metadata (and run on the relay's connection). */
  em: EntityManager;
  hub: EventHub;
  /** Added to the connection's application_name: what other instances read of this one (the secrets' fingerprint). */
  tag?: string;
  /** The pace with no subscriber (IDLE_ADVANCE_MS). */
  idleAdvanceMs?: number;
}): Promise<EventRelay> {
  const idleMs = opts.idleAdvanceMs ?? IDLE_ADVANCE_MS;
  let closed = false;
  let flushing: Promise<void> | null = null;
  /** Every event id up to this one has been published, or will never commit. */
  let highest = 0;
  /** The highest id heard, or a catch-up owed after a reconnect. */
  let heard = 0;
  let catchUp = false;
  /** Until the starting watermark is known, what is heard waits (an advance from 0 would read the whole outbox). */
  let started = false;

  /**
   * Outbox rows of every clinic (the relay serves them all) in (after, upTo], oldest first, no
   * sample: the list mechanism's read on from an id (src/db/list.ts), run on the relay's own
   * connection: no pooled connection taken from requests, no statement among a request's.
   */
  async function rowsBetween(c: pg.Client, after: number, upTo: number): Promise<LiveEvent[]> {
    const rows = (await readAfterId(
      opts.em,
      Event,
      relayRead,
      [{ test: false }, { id: { $lte: upTo } }],
      after,
      PAGE,
      { allClinics: true, on: c },
    )) as unknown as Row[];
    return rows.map((r) => ({
      id: Number(r.id),
      clinicId: Number(r.clinic.id),
      type: r.type,
      scope: r.scope,
      data: r.data,
      createdAt: new Date(r.createdAt),
    }));
  }

  /** The newest committed id, once no write that could still commit a lower one is running. */
  async function settled(c: pg.Client): Promise<number> {
    const { rows } = await c.query<{ max: string; writers: string[] }>(SNAPSHOT);
    let writers = rows[0].writers;
    for (let wait = 1; writers.length > 0; wait = Math.min(wait * 2, MAX_POLL_MS)) {
      await sleep(wait);
      if (current() !== c) throw new Error('event relay lost its connection while waiting');
      writers = (await c.query<{ writers: string[] }>(STILL_RUNNING, [writers])).rows[0].writers;
    }
    return Number(rows[0].max);
  }

  async function advance(): Promise<void> {
    const c = current();
    if (!c || closed) return;
    catchUp = false;
    // Heard before the snapshot, so at most its M (unless deleted since): an id heard during the
    // wait may have lower ones in flight that this snapshot does not know; the next advance does.
    const heardBefore = heard;
    const upTo = Math.max(await settled(c), heardBefore);
    if (opts.hub.size === 0) {
      // No one to hand the rows to (a write burst with no live subscriber in this process: the
      // read was a few per cent of a booking's CPU, issue 38). The watermark moves past them in
      // this same tick, as publishing them would have: a later subscriber replays them (live.ts).
      highest = Math.max(highest, upTo);
      opts.hub.advance(highest);
      return;
    }
    while (highest < upTo) {
      const rows = await rowsBetween(c, highest, upTo);
      for (const row of rows) {
        highest = row.id;
        opts.hub.publish(row);
      }
      if (rows.length < PAGE) highest = upTo;
    }
    opts.hub.advance(highest);
  }

  /** An idle advance waiting for its time, and how to start it now. */
  let idle: { timer: NodeJS.Timeout; now: () => void } | null = null;

  /** The next tick, or with no subscriber (and no catch-up owed) `idleMs` later. */
  function pause(): Promise<void> {
    if (opts.hub.size > 0 || catchUp) return new Promise<void>((resolve) => setImmediate(resolve));
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => start(), idleMs).unref();
      const start = () => {
        clearTimeout(timer);
        idle = null;
        resolve();
      };
      idle = { timer, now: start };
    });
  }
  opts.hub.onSubscribe = () => idle?.now();

  function schedule() {
    if (!started) return;
    flushing ??= pause()
      .then(advance)
      .then(
        () => {
          flushing = null;
          // Disconnected, the reconnect schedules the catch-up: no spinning meanwhile.
          if (current() && (heard > highest || catchUp)) schedule();
        },
        (err) => {
          flushing = null;
          if (closed || !current()) return;
          // Reconnected while this advance failed on the old connection: the catch-up is owed now.
          if (catchUp) schedule();
          // Anything else waits for the next event (or the next reconnect).
          else logger.warn({ err }, 'event relay could not read events back');
        },
      );
  }

  function onNotification(payload: string | undefined) {
    // Only the trigger's `clinic:id`: another process's start-up probe on this channel
    // (listen.ts, roundTrip) must not move the watermark.
    const m = payload === undefined ? null : EVENT_PAYLOAD.exec(payload);
    const id = m ? Number(m[1]) : Number.NaN;
    if (!Number.isSafeInteger(id) || id <= highest) return;
    if (id > heard) heard = id;
    opts.hub.announce(id);
    schedule();
  }

  const listening = await listen({
    databaseUrl: opts.databaseUrl,
    channel: EVENT_CHANNEL,
    name: opts.tag ? taggedName('events', opts.tag) : RELAY_NAME,
    onNotify: onNotification,
    onListening: (_c, again) => {
      if (!again) return;
      // Committed while no one listened: the advance reads everything above `highest`.
      catchUp = true;
      schedule();
    },
  });
  const current = () => listening.client;

  // Start at the newest settled row (not the beginning): only events committed from now on are live.
  try {
    highest = await settled(current() as pg.Client);
  } catch (err) {
    // A start that fails here keeps no connection open.
    await listening.close();
    throw err;
  }
  opts.hub.advance(highest);
  started = true;
  if (heard > highest) schedule();
  return {
    proveEventPath: (notify, timeoutMs) => listening.roundTrip(notify, timeoutMs),
    async otherTags() {
      const c = current();
      return c ? otherProcessTags(c) : [];
    },
    async close() {
      closed = true;
      opts.hub.onSubscribe = null;
      idle?.now();
      await listening.close();
      await flushing;
    },
  };
}
