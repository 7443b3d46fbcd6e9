import type { EntityManager } from '@mikro-orm/postgresql';
import { CompiledQuery } from 'kysely';
import { type Db, type JobInsert, PgBoss, type Queue, type WorkHandler, type WorkOptions } from 'pg-boss';
import { type CappedWorker, type CappedWorkerDefinition, startCappedWorker } from './capped-worker.ts';
import { stampRequestId } from './job-scope.ts';
import { listen } from './listen.ts';
import { logger } from './logger.ts';
import { DELETE_WAITING_IN_GROUP, QUEUE_SCHEMA } from './queue-tables.ts';

// The statements and fragments on pg-boss's own tables, for the callers that need them.
export {
  completeClaimed,
  LIVE_JOB_COUNT,
  LIVE_JOB_DATA,
  liveJobInGroup,
  QUEUE_DEPTHS,
  QUEUE_SCHEMA,
  QUEUE_STATES,
} from './queue-tables.ts';

/**
 * The one job queue (pg-boss 12, DESIGN.md "Delivery queue"): webhook deliveries and the chat's
 * network sends. Jobs are created inside the transaction of the change that causes them
 * (`enqueueInTransaction`), so a change and its jobs commit together or not at all; workers run
 * in the service process by default and in `npm run worker` for scale. pg-boss gives us what we
 * would otherwise hand-write: SKIP LOCKED fetches (several workers never take one job at once),
 * a heartbeat that gives a killed worker's job back within a minute, fenced completion, and
 * LISTEN/NOTIFY wake-ups. A cap per group that must hold across processes is ours
 * (src/lib/capped-worker.ts): pg-boss's own `groupConcurrency` is counted without a lock.
 */

/** A queue a domain declares (src/webhooks/…, src/services/chat/…): its name and pg-boss options. */
export interface QueueDefinition {
  name: string;
  options: Omit<Queue, 'name'>;
}

/** A worker a domain runs on one of its queues. */
export interface WorkerDefinition<T extends object = any> {
  queue: string;
  options: WorkOptions;
  handler: WorkHandler<T>;
  /**
   * Instead of `options.localConcurrency`: this many pollers, each its own pg-boss worker, and one
   * that found jobs fetches again as soon as they are settled. pg-boss's own pollers wait out the
   * polling interval after every fetch that is not a full batch (at batchSize 1, every fetch), so a
   * backlog that no new job's NOTIFY wakes them for (a burst once written, retries coming due)
   * drains one job per poller per interval.
   */
  pollers?: number;
}

/** Either kind: pg-boss's own worker, or one capped per group across processes (src/lib/capped-worker.ts). */
export type AnyWorkerDefinition = WorkerDefinition | CappedWorkerDefinition;

const isCapped = (w: AnyWorkerDefinition): w is CappedWorkerDefinition => 'cap' in w;

export interface JobQueue {
  readonly boss: PgBoss;
  /** Starts `workers` in this process (the service's default, and `npm run worker`). */
  /**
   * Starts `workers` in this process (the service's default, and `npm run worker`); answers the
   * pg-boss worker ids it started, in order (none for a capped worker), for a caller that wakes
   * its own worker (`boss.notifyWorker`) when it knows work is due.
   */
  work(workers: readonly AnyWorkerDefinition[]): Promise<string[]>;
  /**
   * Sends a job to queue `name` unless one was already sent in the same `seconds`-long slot of the
   * database's clock (pg-boss's throttle): any number of processes calling it once a slot make one
   * job a slot. (pg-boss's cron schedules send at most one job a minute.)
   */
  sendOncePer(name: string, seconds: number): Promise<void>;
  /** Stops fetching, lets jobs under way finish (up to `graceMs`), closes the pool. */
  stop(graceMs?: number): Promise<void>;
}

export async function startJobQueue(opts: {
  databaseUrl: string;
  /**
   * Where the queue's LISTEN and the delivery slots' advisory locks go (src/lib/session-url.ts);
   * `databaseUrl` when absent.
   */
  sessionUrl?: string;
  queues: readonly QueueDefinition[];
  /** Connections of pg-boss's own pool (fetches, completions, maintenance). */
  poolSize?: number;
  /**
   * How often this instance looks for jobs whose worker stopped heartbeating (and expired ones):
   * pg-boss's 60 s by default; the SIGKILL test lowers it.
   */
  superviseIntervalSeconds?: number;
  /** The scope every job's handler runs in (the server's system scope: src/server/jobs.ts). */
  runJob?: <T>(fn: () => Promise<T>) => Promise<T>;
}): Promise<JobQueue> {
  const boss = new PgBoss({
    connectionString: opts.databaseUrl,
    schema: QUEUE_SCHEMA,
    max: opts.poolSize ?? 4,
    application_name: 'clinic-gateway queue',
    // A job created on a notify queue wakes the workers at once instead of at their next poll.
    useListenNotify: true,
    ...(opts.superviseIntervalSeconds
      ? {
          superviseIntervalSeconds: opts.superviseIntervalSeconds,
          monitorIntervalSeconds: opts.superviseIntervalSeconds,
        }
      : {}),
  });
  const sessionUrl = opts.sessionUrl ?? opts.databaseUrl;
  // pg-boss LISTENs on a client of its own pool's address; through a transaction pooler the
  // registration is lost at once. Its listener goes to the session address instead.
  if (sessionUrl !== opts.databaseUrl) listenOnSession(boss, sessionUrl);
  boss.on('error', (err) => logger.error({ err }, 'job queue error'));
  await boss.start();
  for (const q of opts.queues) await ensureQueue(boss, q);
  const workerIds: string[] = [];
  const capped: CappedWorker[] = [];
  const runJob = opts.runJob ?? (<T>(fn: () => Promise<T>) => fn());
  return {
    boss,
    async work(workers) {
      const started: string[] = [];
      for (const w of workers) {
        if (isCapped(w)) {
          capped.push(
            await startCappedWorker(boss, w, { databaseUrl: sessionUrl, schema: QUEUE_SCHEMA, runJob }),
          );
          continue;
        }
        const scoped: WorkHandler<any> = (jobs) => runJob(() => w.handler(jobs));
        if (!w.pollers) {
          const id = await boss.work(w.queue, w.options, scoped);
          workerIds.push(id);
          started.push(id);
          continue;
        }
        for (let i = 0; i < w.pollers; i++) {
          let id: string | undefined;
          const handler: WorkHandler<any> = async (jobs) => {
            try {
              return await scoped(jobs);
            } finally {
              // Marks this poller notified: it skips its wait and fetches again at once.
              if (jobs.length && id) boss.notifyWorker(id);
            }
          };
          id = await boss.work(w.queue, { ...w.options, localConcurrency: 1 }, handler);
          workerIds.push(id);
          started.push(id);
        }
      }
      return started;
    },
    async sendOncePer(name, seconds) {
      await boss.sendThrottled(name, null, null, seconds);
    },
    async stop(graceMs = 10_000) {
      // Before pg-boss closes the pool its jobs are settled through.
      await Promise.all(capped.map((c) => c.stop(graceMs)));
      await boss.stop({ graceful: true, timeout: graceMs, close: true });
    },
  };
}

/** Creates the queue, or brings an existing one's options to the declared ones (several processes may race). */
async function ensureQueue(boss: PgBoss, q: QueueDefinition) {
  if (!(await boss.getQueue(q.name))) {
    try {
      await boss.createQueue(q.name, q.options);
      return;
    } catch (err) {
      if (!(await boss.getQueue(q.name))) throw err;
    }
  }
  const { policy: _fixed, partition: _alsoFixed, ...changeable } = q.options;
  await boss.updateQueue(q.name, changeable);
}

/**
 * The queue of a database: writes find it through their EntityManager (every fork shares its
 * ORM's configuration), so services take no extra argument and a process that writes (server,
 * worker, CLI) attaches its queue once, at start.
 */
const queues = new WeakMap<object, JobQueue | (() => Promise<JobQueue>)>();

/** `queue` or, for a short-lived process (the CLI), a way to start it the first time a write needs it. */
export function attachJobQueue(em: EntityManager, queue: JobQueue | (() => Promise<JobQueue>)): void {
  queues.set(em.config, queue);
}

export function detachJobQueue(em: EntityManager): void {
  queues.delete(em.config);
}

/**
 * Creates `jobs` on queue `name` through the transaction `em` is in: they exist once it commits,
 * and never if it rolls back.
 */
export async function enqueueInTransaction(
  em: EntityManager,
  name: string,
  jobs: JobInsert[],
): Promise<void> {
  if (!jobs.length) return;
  const queue = await queueOf(em);
  await queue.boss.insert(name, stamped(jobs), { db: transactionDb(em) });
}

/**
 * Creates `jobs` on queue `name` at once, outside any transaction: for jobs that belong to no
 * change of ours (the sandbox network's receipts, which stand for the network's own state).
 */
export async function enqueue(queue: JobQueue, name: string, jobs: JobInsert[]): Promise<void> {
  if (!jobs.length) return;
  await queue.boss.insert(name, stamped(jobs));
}

/** Each job names the request that queued it: its worker's log lines carry that id (job-scope.ts). */
const stamped = (jobs: JobInsert[]) => jobs.map((j) => ({ ...j, data: stampRequestId(j.data) }));

/** A claim on a job as a worker fetched it: its id and the attempt (`retry_count`) it was handed. */
export interface JobClaim {
  id: string;
  retryCount: number;
}

/**
 * Completes the claimed jobs through the transaction `em` is in, fenced on the attempt each was
 * fetched at (pg-boss's `complete` with `{ id, retryCount }`): a worker whose claim lapsed
 * (heartbeat missed, expired) and whose job another worker now holds settles nothing. Answers how
 * many it completed, for the caller to roll back what it recorded for a lapsed claim.
 */
export async function completeInTransaction(
  em: EntityManager,
  name: string,
  claims: readonly JobClaim[],
): Promise<number> {
  if (!claims.length) return 0;
  const queue = await queueOf(em);
  const res = await queue.boss.complete(
    name,
    claims.map((c) => ({ id: c.id, retryCount: c.retryCount })),
    undefined,
    { db: transactionDb(em) },
  );
  // 12.38's d.ts declares CommandResponse empty; manager.js answers { jobs, requested, affected, settled }.
  return (res as { affected?: number }).affected ?? 0;
}

async function queueOf(em: EntityManager): Promise<JobQueue> {
  const attached = queues.get(em.config);
  if (!attached) throw new Error('No job queue is attached to this database (attachJobQueue at start).');
  return typeof attached === 'function' ? attached() : attached;
}

/**
 * pg-boss's `Db` over the transaction's own connection, with real `$n` parameters (MikroORM's
 * `execute` would inline them, and pg-boss's statements use `$n`).
 */
function transactionDb(em: EntityManager): Db {
  const trx = em.getTransactionContext();
  if (!trx) throw new Error('enqueueInTransaction needs an EntityManager inside a transaction.');
  return {
    async executeSql(text: string, values: unknown[] = []) {
      const res = await trx.executeQuery(CompiledQuery.raw(text, values));
      return { rows: res.rows as any[] };
    },
  };
}

/**
 * Replaces the `listen` of pg-boss's own database adapter (the IDatabase capability its notifier
 * calls at start) by our dedicated session connection (src/lib/listen.ts), which reconnects by
 * itself and tells pg-boss to fetch again after a drop, as pg-boss's own does.
 */
function listenOnSession(boss: PgBoss, sessionUrl: string): void {
  const db = boss.getDb();
  db.listen = async (channel, onNotification, onReconnect) =>
    listen({
      databaseUrl: sessionUrl,
      channel,
      name: 'clinic-gateway queue wake-ups',
      onNotify: (payload) => {
        if (payload !== undefined) onNotification(payload);
      },
      onListening: (_client, again) => {
        if (again) onReconnect();
      },
    });
}

/**
 * Deletes the waiting jobs of one group of queue `name` in the transaction `em` is in (pg-boss's
 * API deletes by id or whole queue only): a deleted webhook subscription's queued attempts.
 */
export async function deleteWaitingInGroup(em: EntityManager, name: string, group: string): Promise<void> {
  await em.getConnection().execute(DELETE_WAITING_IN_GROUP, [name, group], 'run', em.getTransactionContext());
}
