import { createHash } from 'node:crypto';
import type pg from 'pg';
import type { Db, Job, JobResult, PgBoss } from 'pg-boss';
import { type GroupCap, type Slot, startSlotLease } from './group-slots.ts';
import { logger } from './logger.ts';
import { GIVE_BACK } from './queue-tables.ts';

/**
 * A worker whose jobs of one group run at most `cap.perGroup` at once across every process
 * (src/lib/group-slots.ts: the slots are advisory locks of the process's lease connection). It
 * uses pg-boss for what pg-boss does well (storage, SKIP LOCKED fetches, retries, fenced
 * completion, heartbeats) and keeps the claim to itself:
 * 1. on the lease connection, one claim at a time per process: the groups whose slots are all held
 *    are read from `pg_locks`, pg-boss fetches a batch skipping them (`ignoreGroups`), a slot is
 *    taken for each job, and a job that got none (its group filled meanwhile) is given back at
 *    once (unstarted: no attempt is counted);
 * 2. each job's slot is given back as soon as its own promise settles, not when its batch ends, so
 *    a hanging job holds its own slot and poller, never its batch-mates' slots;
 * 3. a poller that found jobs claims again at once; an idle one waits for the queue's NOTIFY, a
 *    slot given back in this process, or the worker's backstop every `pollIntervalMs` (retries
 *    coming due, slots other processes freed).
 */
export interface CappedWorkerDefinition<T extends object = any> {
  queue: string;
  cap: GroupCap;
  /** Jobs claimed at once by one poller; they run in parallel. */
  batchSize: number;
  /** Pollers in this process, each with at most one batch in hand. */
  pollers: number;
  /** How often an idle worker looks for work nothing announced (one poller, then more if it finds a full batch). */
  pollIntervalMs: number;
  /**
   * One promise per job, in the batch's order: the job's result for pg-boss to settle, or null
   * when the handler settled it itself (with its own record, fenced). A rejection fails the job
   * (pg-boss retries it).
   */
  handle(jobs: Job<T>[]): Promise<JobResult | null>[];
}

export interface CappedWorker {
  /** Stops claiming, waits up to `graceMs` for jobs under way, fails (for a retry) those still running. */
  stop(graceMs: number): Promise<void>;
}

interface Claimed {
  job: Job<any>;
  slot?: Slot;
}

/** pg-boss's NOTIFY channel for a schema (its plans.notifyChannelSql, which pg-boss does not export). */
export const queueChannel = (schema: string) =>
  `pgboss_${createHash('sha224').update(schema).digest('hex').slice(0, 24)}`;

/** Gives claimed jobs back untouched (`GIVE_BACK`, src/lib/queue-tables.ts). */
async function giveBack(db: Db, queue: string, ids: string[]): Promise<void> {
  if (!ids.length) return;
  await db.executeSql(GIVE_BACK, [queue, ids]);
}

const clientDb = (client: pg.Client): Db => ({
  async executeSql(text: string, values?: unknown[]) {
    const res = await client.query(text, values as any[]);
    return { rows: res.rows };
  },
});

export async function startCappedWorker(
  boss: PgBoss,
  def: CappedWorkerDefinition,
  opts: { databaseUrl: string; schema: string; runJob: <R>(fn: () => Promise<R>) => Promise<R> },
): Promise<CappedWorker> {
  let stopped = false;
  const idle = new Set<() => void>();
  const wakeOne = () => {
    const next = idle.values().next();
    if (next.done) return;
    idle.delete(next.value);
    next.value();
  };
  const lease = await startSlotLease({
    databaseUrl: opts.databaseUrl,
    cap: def.cap,
    channel: queueChannel(opts.schema),
    name: `clinic-gateway ${def.queue} slots`,
    onNotify: (payload) => {
      if (payload === def.queue) wakeOne();
    },
    onReady: wakeOne,
  });
  /** Jobs being handled, for stop() to fail the ones that outlive the grace. */
  const running = new Map<string, { id: string; retryCount: number }>();
  const poolDb = boss.getDb() as Db;

  async function claim(): Promise<Claimed[]> {
    const out = await lease.exclusive(async (session) => {
      const db = clientDb(session.client);
      const ignoreGroups = await session.fullGroups();
      const jobs = await boss.fetch(def.queue, { batchSize: def.batchSize, ignoreGroups, db } as any);
      if (!jobs.length) return [];
      let taken = new Map<string, Slot[]>();
      let acquired: Slot[] = [];
      try {
        const wanted = new Map<string, number>();
        for (const j of jobs) if (j.groupId) wanted.set(j.groupId, (wanted.get(j.groupId) ?? 0) + 1);
        if (wanted.size) taken = await session.acquire(wanted);
        acquired = [...taken.values()].flat();
        const claimed: Claimed[] = [];
        const losers: string[] = [];
        for (const job of jobs) {
          if (!job.groupId) {
            claimed.push({ job });
            continue;
          }
          const slot = taken.get(job.groupId)?.shift();
          if (slot) claimed.push({ job, slot });
          else losers.push(job.id);
        }
        await giveBack(db, def.queue, losers);
        return claimed;
      } catch (err) {
        // Nothing half-claimed is kept: the batch goes back to the queue and its slots are freed.
        for (const s of acquired) lease.release(s);
        await giveBack(
          poolDb,
          def.queue,
          jobs.map((j) => j.id),
        ).catch(() => {});
        throw err;
      }
    });
    return out ?? [];
  }

  async function handle(batch: Claimed[]): Promise<void> {
    const claims = batch.map(({ job }) => ({ id: job.id, retryCount: job.retryCount }));
    for (const c of claims) running.set(c.id, c);
    const open = new Set(claims);
    const beats = batch.map(({ job }) => job.heartbeatSeconds ?? 0).filter((s) => s > 0);
    // pg-boss's heartbeat contract, which its own work() would keep: refreshed at half the period.
    const heartbeat = beats.length
      ? setInterval(
          () => {
            if (open.size)
              boss.touch(def.queue, [...open]).catch((err) => logger.warn({ err }, 'job heartbeat failed'));
          },
          (Math.min(...beats) * 1000) / 2,
        )
      : undefined;
    const completed: { id: string; retryCount: number }[] = [];
    try {
      await opts.runJob(async () => {
        let promises: Promise<JobResult | null>[];
        try {
          promises = def.handle(batch.map((b) => b.job));
        } catch (err) {
          promises = batch.map(() => Promise.reject(err));
        }
        await Promise.all(
          promises.map(async (p, i) => {
            const claim = claims[i];
            const result = await p.catch(
              (err): JobResult => ({ id: claim.id, status: 'failed', output: { message: String(err) } }),
            );
            open.delete(claim);
            const slot = batch[i].slot;
            if (slot) lease.release(slot);
            // null: settled by the handler.
            if (result?.status === 'completed') completed.push(claim);
            else if (result)
              await boss
                .fail(def.queue, [claim], result.output)
                .catch((err) => logger.error({ err }, 'job not failed'));
            running.delete(claim.id);
          }),
        );
      });
      // Jobs the handler left to us, in one statement.
      if (completed.length) await boss.complete(def.queue, completed);
    } catch (err) {
      logger.error({ err, queue: def.queue }, 'job batch not settled');
    } finally {
      if (heartbeat) clearInterval(heartbeat);
    }
  }

  function waitForWork(): Promise<void> {
    // A poller that was claiming while stop() woke the idle ones must not go to sleep after it.
    if (stopped) return Promise.resolve();
    return new Promise((resolve) => idle.add(resolve));
  }

  // One backstop for the whole worker, not one per poller: it wakes one idle poller, which wakes
  // the next if it found a full batch. Idle, a process claims once per interval, not 16 times a second.
  const backstop = setInterval(wakeOne, def.pollIntervalMs);
  backstop.unref();

  async function poll(): Promise<void> {
    while (!stopped) {
      let batch: Claimed[];
      try {
        batch = await claim();
      } catch (err) {
        logger.error({ err, queue: def.queue }, 'job claim failed');
        await waitForWork();
        continue;
      }
      if (stopped && batch.length) {
        // Claimed while stopping: back to the queue untouched.
        for (const b of batch) if (b.slot) lease.release(b.slot);
        await giveBack(
          poolDb,
          def.queue,
          batch.map((b) => b.job.id),
        ).catch(() => {});
        return;
      }
      if (!batch.length) {
        await waitForWork();
        continue;
      }
      // A full batch: more may be waiting, so another idle poller claims too.
      if (batch.length === def.batchSize) wakeOne();
      await handle(batch);
    }
  }

  const loops = Array.from({ length: def.pollers }, () => poll());

  return {
    async stop(graceMs) {
      stopped = true;
      clearInterval(backstop);
      for (const wake of [...idle]) wake();
      idle.clear();
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<void>((r) => {
        timer = setTimeout(r, graceMs);
      });
      await Promise.race([Promise.all(loops), grace]);
      clearTimeout(timer);
      // Outlived the grace: failed now so that pg-boss retries them soon, as its own stop does.
      if (running.size) await boss.fail(def.queue, [...running.values()]).catch(() => {});
      await lease.close();
    },
  };
}
