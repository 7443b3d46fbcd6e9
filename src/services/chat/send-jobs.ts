import type { EntityManager } from '@mikro-orm/postgresql';
import { enqueueInTransaction, liveJobInGroup, type QueueDefinition } from '../../lib/job-queue.ts';
import type { QueuedBy } from '../../lib/job-scope.ts';

/**
 * The chat's network sends (issue 17, Outbound messages through the same queue): one job per
 * outbound message, created in the transaction that records it queued (src/services/chat/send.ts),
 * so a message is recorded with its job or not at all, and a process killed after the commit
 * leaves a job another worker takes. Jobs carry ids only; the worker reads the message
 * (src/services/chat/send-worker.ts).
 */
export const SEND_QUEUE = 'chat-send';
/** Where a send that ran out of attempts goes, to fail its message with a reason. */
export const SEND_FAILED_QUEUE = 'chat-send-failed';

export interface SendJob extends QueuedBy {
  /** The message's row id (`out_N`'s N). */
  message: number;
  clinic: number;
  /**
   * When this send first found an earlier message of its conversation unsent and stepped back
   * for it (ISO time; send-worker.ts). Absent on a send that has not waited.
   */
  waitingSince?: string;
}

/**
 * Attempts of one send: the first, then six retries about 5 s apart, doubling each time (pg-boss
 * backoff with jitter, each wait at most 3 minutes): 5 to 10 minutes of a network that cannot
 * take the message, then the message fails. A worker that dies or hangs mid-send counts as an
 * attempt (heartbeat, expiry).
 */
export const SEND_RETRY = { retryLimit: 6, retryDelay: 5, retryBackoff: true, retryDelayMax: 180 } as const;

export const sendFailedQueue: QueueDefinition = {
  name: SEND_FAILED_QUEUE,
  options: {
    notify: true,
    retryLimit: 10,
    retryDelay: 10,
    retryBackoff: true,
    retryDelayMax: 600,
    retentionSeconds: 7 * 24 * 3600,
    deleteAfterSeconds: 7 * 24 * 3600,
  },
};

export const sendQueue: QueueDefinition = {
  name: SEND_QUEUE,
  options: {
    notify: true,
    ...SEND_RETRY,
    // A worker that stops heartbeating (killed) gives its job back within about 30 s.
    heartbeatSeconds: 30,
    // A network call that hangs is given up on and tried again.
    expireInSeconds: 60,
    deadLetter: SEND_FAILED_QUEUE,
    // A job waiting for a worker keeps pg-boss's default 14 days (the message stays queued).
    deleteAfterSeconds: 24 * 3600,
  },
};

/**
 * One conversation's sends go out one at a time, in the order they were recorded (a media
 * message before its caption); other conversations are not held up. The group holds only while
 * a send is active: a job waiting to retry frees it, so the worker also checks that no earlier
 * message of the conversation is still unsent (send-worker.ts, unsent.ts).
 */
export const sendGroup = (conversation: number) => ({ id: `conv_${conversation}` });

/**
 * SQL condition: the message whose id is `messageColumn`, of the conversation whose group id is
 * the one parameter (`sendGroup(conversation).id`), has a send job that pg-boss will still run:
 * waiting, waiting to retry, or under way (a killed worker's comes back). A message without one
 * is never sent (its job lost, or out of attempts and about to be failed by the dead letter).
 * Read straight from pg-boss's table (src/lib/queue-tables.ts).
 */
export const liveSendJob = (messageColumn: string) => liveJobInGroup(SEND_QUEUE, 'message', messageColumn);

/**
 * Creates the send job of a message in the transaction `em` is in; `startAfter` (seconds) for a
 * send that steps back behind an earlier message (send-worker.ts).
 */
export function enqueueSend(em: EntityManager, job: SendJob & { conversation: number }, startAfter?: number) {
  const { conversation, ...data } = job;
  return enqueueInTransaction(em, SEND_QUEUE, [
    {
      data: data satisfies SendJob,
      group: sendGroup(conversation),
      ...(startAfter ? { startAfter } : {}),
    },
  ]);
}
