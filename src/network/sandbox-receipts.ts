import { createHash } from 'node:crypto';
import type { Job, JobResult } from 'pg-boss';
import { enqueue, type JobQueue, LIVE_JOB_COUNT, type QueueDefinition } from '../lib/job-queue.ts';
import { asQueuedBy, type QueuedBy, scopeLog } from '../lib/job-scope.ts';

/**
 * The sandbox network's pending receipts, kept as jobs on the one job queue (src/lib/job-queue.ts)
 * instead of timers in the process that took the send: a real network keeps its receipts whatever
 * happens to its client, so a service killed after the network accepted a message still gets the
 * message's sent, delivered and read receipts once it runs again (docs/chat.md, The sandbox
 * network; test/sandbox-receipts-kill.test.ts).
 *
 * One job per message at a time, holding all of the message's receipts and the place of the one
 * it posts: the job posts it and, before it completes, creates the job of the next (startAfter its
 * due time), so one message's receipts come in order, however many processes work the queue and
 * whatever is retried. The next job's id is derived from the network id and the receipt's place,
 * so a job run again (its worker killed between the two) posts its receipt twice, as networks do,
 * and creates no second chain (pg-boss inserts ON CONFLICT DO NOTHING).
 */
export const SANDBOX_RECEIPTS_QUEUE = 'sandbox-receipts';

export const sandboxReceiptsQueue: QueueDefinition = {
  name: SANDBOX_RECEIPTS_QUEUE,
  options: {
    // A receipt the service cannot take (it is down, or answers 5xx) is posted again for about a
    // day, as a network retries a callback: 1 s, doubling to every 10 minutes, 150 times.
    retryLimit: 150,
    retryDelay: 1,
    retryBackoff: true,
    retryDelayMax: 600,
    // A worker killed while posting gives its job back at the next supervision after this.
    expireInSeconds: 60,
    deleteAfterSeconds: 3600,
  },
};

export type ReceiptStatus = 'sent' | 'delivered' | 'read' | 'failed';

/** One receipt of a message, `afterMs` after the network took it. */
export interface ReceiptStep {
  status: ReceiptStatus;
  failureReason: string | null;
  afterMs: number;
  /** Media the network fetches first: sent if it can, failed if not. */
  mediaUrl?: string;
}

/** The receipts of one message the network took. */
export interface MessageReceipts {
  networkMessageId: string;
  clinicPhone: string;
  steps: ReceiptStep[];
}

/** A receipt come due: what the sandbox posts to the service (SandboxNetwork.postReceipt). */
export type DueReceipt = Omit<MessageReceipts, 'steps'> & ReceiptStep;

/** Where the sandbox keeps a message's receipts until their times. */
export interface ReceiptSchedule {
  /** Keeps `receipts` (durably once it resolves) and has each posted at its time, in order. */
  schedule(receipts: MessageReceipts): Promise<void>;
  /** Resolves once every receipt scheduled so far, by any process, has been posted (tests). */
  settle(): Promise<void>;
  /** Stops this process's part (its jobs wait for the next worker). */
  close(): void;
}

interface ReceiptJob extends MessageReceipts, QueuedBy {
  /** When the network took the message (ms since the epoch, the real clock: pg-boss compares with its own). */
  acceptedAt: number;
  /** The place of the receipt this job posts. */
  step: number;
}

/** How often the worker looks for receipts come due that no timer of this process announces. */
const POLL_SECONDS = 1;
/** Receipts posted at once, each of another message (one job per message at a time). */
const BATCH = 50;

/**
 * The durable ReceiptSchedule: jobs on SANDBOX_RECEIPTS_QUEUE and a worker posting them. The
 * process that schedules a receipt also wakes its worker at the receipt's due time (a timer), so
 * receipts come on time; the worker's poll, every POLL_SECONDS, finds the others (scheduled by a
 * process since killed, or by another process), within about a second of their time.
 */
export class QueuedReceipts implements ReceiptSchedule {
  #queue: JobQueue | null = null;
  #workerId: string | null = null;
  readonly #ready: Promise<JobQueue>;
  #resolveReady!: (queue: JobQueue) => void;
  readonly #timers = new Set<NodeJS.Timeout>();

  constructor() {
    this.#ready = new Promise((resolve) => (this.#resolveReady = resolve));
  }

  /**
   * Starts the worker that posts receipts come due through `post` (which throws for one to be
   * posted again later). Sends scheduled before this wait for it.
   */
  async start(queue: JobQueue, post: (receipt: DueReceipt) => Promise<void>): Promise<void> {
    const boss = queue.boss;
    const handler = async (jobs: Job<ReceiptJob>[]): Promise<JobResult[]> => {
      try {
        // Each as the request whose send the network took (its id, kept from job to job).
        return await Promise.all(jobs.map((job) => asQueuedBy(job.data, () => this.#run(queue, job, post))));
      } finally {
        // A backlog (after a restart) is drained at once, not one batch per poll.
        if (jobs.length && this.#workerId) boss.notifyWorker(this.#workerId);
      }
    };
    // The one way to start a worker (JobQueue.work: the system scope its jobs run in); its id is
    // what the due-time timers wake.
    [this.#workerId] = await queue.work([
      {
        queue: SANDBOX_RECEIPTS_QUEUE,
        options: { batchSize: BATCH, pollingIntervalSeconds: POLL_SECONDS, perJobResults: true },
        handler,
      },
    ]);
    this.#queue = queue;
    this.#resolveReady(queue);
  }

  async schedule(receipts: MessageReceipts): Promise<void> {
    if (!receipts.steps.length) return;
    const queue = this.#queue ?? (await this.#ready);
    await this.#enqueue(queue, { ...receipts, acceptedAt: Date.now(), step: 0 });
  }

  async settle(timeoutMs = 30_000): Promise<void> {
    const db = (this.#queue ?? (await this.#ready)).boss.getDb();
    for (const until = Date.now() + timeoutMs; ; ) {
      const { rows } = await db.executeSql(LIVE_JOB_COUNT, [SANDBOX_RECEIPTS_QUEUE]);
      const left = Number(rows[0].n);
      if (left === 0) return;
      if (Date.now() > until) throw new Error(`${left} sandbox receipt(s) still not posted.`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  close(): void {
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
  }

  /** Posts the job's receipt, then creates the next one's job; the job fails (to be retried) if either fails. */
  async #run(
    queue: JobQueue,
    job: Job<ReceiptJob>,
    post: (r: DueReceipt) => Promise<void>,
  ): Promise<JobResult> {
    const { steps, step, acceptedAt: _at, requestId: _id, ...message } = job.data;
    try {
      await post({ ...message, ...steps[step] });
      if (step + 1 < steps.length) await this.#enqueue(queue, { ...job.data, step: step + 1 });
      return { id: job.id, status: 'completed' };
    } catch (e) {
      scopeLog().warn(
        { networkMessageId: message.networkMessageId, status: steps[step].status, err: (e as Error).message },
        'sandbox receipt not posted; posted again later',
      );
      return { id: job.id, status: 'failed', output: { message: (e as Error).message } };
    }
  }

  async #enqueue(queue: JobQueue, job: ReceiptJob): Promise<void> {
    const due = job.acceptedAt + job.steps[job.step].afterMs;
    // Through the shared enqueue: the job carries the id of the request whose send it answers.
    await enqueue(queue, SANDBOX_RECEIPTS_QUEUE, [
      { id: jobIdOf(job.networkMessageId, job.step), data: job, startAfter: new Date(due) },
    ]);
    this.#wakeAt(due);
  }

  /** Wakes this process's worker when a receipt comes due, instead of at its next poll. */
  #wakeAt(due: number) {
    const timer = setTimeout(
      () => {
        this.#timers.delete(timer);
        if (this.#workerId) this.#queue?.boss.notifyWorker(this.#workerId);
      },
      // A few ms past: the database's clock decides when the job is due.
      Math.max(0, due - Date.now()) + 5,
    );
    timer.unref();
    this.#timers.add(timer);
  }
}

/** The job id of a message's receipt: the same every time, so it is created once. */
function jobIdOf(networkMessageId: string, step: number): string {
  const h = createHash('sha256').update(`${networkMessageId}:${step}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
