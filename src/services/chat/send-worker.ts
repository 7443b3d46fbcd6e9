import type { EntityManager } from '@mikro-orm/postgresql';
import type { Job, JobWithMetadata } from 'pg-boss';
import { Clinic, Message, Template } from '../../entities/index.ts';
import { bounded } from '../../lib/bounded.ts';
import type { Clock } from '../../lib/clock.ts';
import { messageId } from '../../lib/ids.ts';
import { completeInTransaction, type JobClaim, type WorkerDefinition } from '../../lib/job-queue.ts';
import { asQueuedBy, scopeLog } from '../../lib/job-scope.ts';
import { chatSends } from '../../lib/metrics.ts';
import { atWriteTime } from '../../lib/request-context.ts';
import { NetworkRefusal, type OutboundMessage } from '../../network/adapter.ts';
import { clinicWrite } from '../unit-of-work.ts';
import { chatChange } from './changes.ts';
import type { ChatMedia } from './deps.ts';
import { messageEvent } from './events.ts';
import { type ChatNetworks, networkOf } from './networks.ts';
import { enqueueSend, SEND_FAILED_QUEUE, SEND_QUEUE, type SendJob } from './send-jobs.ts';
import { earlierUnsent } from './unsent.ts';

/**
 * Hands queued messages to the network (docs/chat.md, Sending): reads the message its job names,
 * sends it, saves the network's id (which receipts are matched by). A refusal fails the message
 * at once; any other error is transient and pg-boss tries the job again (send-jobs.ts,
 * SEND_RETRY); a job out of attempts lands in the dead-letter queue, whose worker fails the
 * message with the last error. A message whose conversation has an earlier one still unsent
 * waits for it (waitsForEarlier): one conversation's messages reach the network in order.
 *
 * At least once, made as close to once as the network allows: a message that already has a
 * network id is never sent again, and every attempt carries the message's own id as the
 * network's client reference. The one gap is a worker killed after the network accepted and
 * before the id was saved, on a network that does not deduplicate on the reference: the next
 * attempt sends the message a second time.
 */
export interface SendWorkerDeps {
  /** The process's root EntityManager; each job forks its own. */
  em: EntityManager;
  /** The network of each clinic mode: a message goes out through its clinic's (docs/test-mode.md). */
  networks: ChatNetworks;
  /** Signed links the network fetches media from (ChatMedia.link); media sends fail without them. */
  mediaLink?: ChatMedia['link'];
  /** The time of the failures it records (the server's injected clock). */
  clock: Clock;
  /** Sends under way at once in this process (one conversation's always one at a time). */
  concurrency?: number;
  /** How long an attempt waits for the network's answer (NETWORK_TIMEOUT_MS by default). */
  networkTimeoutMs?: number;
}

/**
 * An attempt stops waiting for the network after this, well within the job's 60 s expiry
 * (send-jobs.ts): an attempt always ends before pg-boss gives its job to another, so two attempts
 * of one message never overlap. The next attempt carries the same reference (the network
 * recognises a message it took meanwhile).
 */
export const NETWORK_TIMEOUT_MS = 30_000;

export function chatSendWorkers(deps: SendWorkerDeps): WorkerDefinition[] {
  return [
    {
      queue: SEND_QUEUE,
      options: {
        localConcurrency: deps.concurrency ?? 4,
        groupConcurrency: 1,
        // New jobs wake the workers (NOTIFY); a retry coming due, or a conversation's next send
        // once the one before it is done, is only found by polling: every 2 s, not pg-boss's 30.
        notifyPollingIntervalSeconds: 2,
      },
      handler: async (jobs: Job<SendJob>[]) => {
        for (const job of jobs)
          await asQueuedBy(job.data, () =>
            sendQueued(deps, job.data, { id: job.id, retryCount: job.retryCount }),
          );
      },
    },
    {
      queue: SEND_FAILED_QUEUE,
      options: { includeMetadata: true, notifyPollingIntervalSeconds: 2 },
      handler: async (jobs: JobWithMetadata<SendJob>[]) => {
        for (const job of jobs) {
          const attempts = (job.sourceRetryCount ?? 0) + 1;
          const last = lastError(job.sourceOutput);
          await asQueuedBy(job.data, async () => {
            await failSend(
              deps,
              job.data,
              `The messaging network could not take the message in ${attempts} attempt(s)${last ? `: ${last}` : '.'}`,
            );
            chatSends.inc({ outcome: 'failed' });
          });
        }
      },
    },
  ] as WorkerDefinition[];
}

/**
 * How long a send steps back for an earlier unsent message of its conversation before it goes
 * out anyway: longer than the earlier one's own attempts and its failure take (about 10 minutes,
 * send-jobs.ts SEND_RETRY), so order gives way only to an earlier message whose job is alive but
 * not getting through. One with no live job at all is not waited for (unsent.ts, earlierUnsent).
 */
export const ORDER_WAIT_MS = 15 * 60 * 1000;
/**
 * Seconds until a send that stepped back looks again: 2 at first (a caption right after its
 * image), then a quarter of the time it has waited, at most 30, so a long wait (the network down
 * for minutes) costs a few dozen jobs, not one every 2 s.
 */
export const recheckSeconds = (waitedMs: number) => Math.min(30, Math.max(2, Math.round(waitedMs / 4000)));

/** What one attempt came to (the `outcome` label of chat_sends_total: src/lib/metrics.ts). */
type SendOutcome = 'sent' | 'refused' | 'waiting' | 'skipped';

/**
 * One attempt to hand a message to the network; throws to have it tried again. `claim` is the
 * job as fetched, for a send that steps back to be replaced by a later one. Counted by outcome
 * and logged, in the scope of the request that queued it (src/lib/job-scope.ts).
 */
export async function sendQueued(deps: SendWorkerDeps, job: SendJob, claim?: JobClaim): Promise<void> {
  const started = performance.now();
  const line = (outcome: string) => ({
    message: messageId('outbound', job.message),
    outcome,
    duration_ms: Math.round((performance.now() - started) * 10) / 10,
  });
  let outcome: SendOutcome;
  try {
    outcome = await sendOnce(deps, job, claim);
  } catch (err) {
    chatSends.inc({ outcome: 'error' });
    scopeLog().warn({ ...line('error'), err }, 'chat send attempt');
    throw err;
  }
  chatSends.inc({ outcome });
  scopeLog().info(line(outcome), 'chat send attempt');
}

async function sendOnce(deps: SendWorkerDeps, job: SendJob, claim?: JobClaim): Promise<SendOutcome> {
  const em = deps.em.fork({ clear: true });
  const m = await em.findOne(
    Message,
    { id: job.message, clinic: job.clinic, direction: 'outbound' },
    { filters: false },
  );
  // Sent by an earlier attempt (its completion lost), or failed meanwhile: nothing to do.
  if (!m || m.networkMessageId || m.failedAt) return 'skipped';
  if (await waitsForEarlier(deps, em, job, m, claim)) return 'waiting';
  const { mode } = await em.findOneOrFail(Clinic, job.clinic, { fields: ['mode'], filters: false });
  // A live clinic's send was refused when no live network was configured. One queued to a process
  // that has none (`npm run worker` never has: docs/test-mode.md) fails like a network down: it is
  // tried again on the schedule, then failed.
  const network = networkOf(deps.networks, mode);
  const out = await outboundOf(em, deps, m);
  let networkMessageId: string;
  const timeoutMs = deps.networkTimeoutMs ?? NETWORK_TIMEOUT_MS;
  try {
    ({ networkMessageId } = await bounded(
      (signal) => network.send(out, signal),
      timeoutMs,
      () => new Error(`The messaging network did not answer within ${timeoutMs} ms.`),
    ));
  } catch (e) {
    if (!(e instanceof NetworkRefusal)) throw e;
    await failSend(deps, job, `The messaging network refused the message: ${e.message}`);
    return 'refused';
  }
  await saveNetworkId(deps, job, networkMessageId);
  return 'sent';
}

/**
 * The network's id, saved as a write of the clinic (the one unit of work) that is no change a
 * client sees: the id is in no field of the API, so the message keeps its `updated_at` (its
 * ETag), its place in the sync order and records no event; the receipts move it on.
 */
async function saveNetworkId(deps: SendWorkerDeps, job: SendJob, networkMessageId: string): Promise<void> {
  await clinicWrite(deps.em.fork(), job.clinic, deps.clock.now(), (w) =>
    w.em.nativeUpdate(Message, { id: job.message, networkMessageId: null }, { networkMessageId }),
  );
}

/**
 * pg-boss's group holds a conversation's sends one at a time only while one is active: an
 * earlier send waiting to retry (a transient error) frees it, and this one would overtake it (a
 * caption before its image). So a send whose conversation has an earlier message still unsent
 * steps back: its job is replaced, in one transaction, by a new one a moment later (a wait costs
 * none of the send's own attempts), until the earlier one is sent or failed, or ORDER_WAIT_MS.
 * Answers whether it stepped back. Without a claim (a caller outside the queue) it throws, and
 * its job is retried as after a transient error.
 */
async function waitsForEarlier(
  deps: SendWorkerDeps,
  em: EntityManager,
  job: SendJob,
  m: Message,
  claim: JobClaim | undefined,
): Promise<boolean> {
  const conversation = (m.conversation as unknown as { id: number }).id;
  const earlier = await earlierUnsent(em, { id: m.id, conversationId: conversation, createdAt: m.createdAt });
  if (earlier === null) return false;
  const now = deps.clock.now();
  const since = job.waitingSince ?? now.toISOString();
  const waited = now.getTime() - new Date(since).getTime();
  const earlierId = messageId('outbound', earlier);
  if (waited >= ORDER_WAIT_MS) {
    scopeLog().warn(
      { message: messageId('outbound', m.id), earlier: earlierId, waitedMs: waited },
      'chat send no longer waits for an earlier unsent message',
    );
    return false;
  }
  if (!claim)
    throw new Error(`Waiting for an earlier message (${earlierId}) of the conversation to be sent.`);
  // A write of the clinic's (its queued work), in the one unit of work, though it changes no row
  // of it and records no event.
  const replaced = await clinicWrite(em, job.clinic, now, async (w) => {
    await enqueueSend(w.em, { ...job, waitingSince: since, conversation }, recheckSeconds(waited));
    // Fenced on the attempt fetched: a claim that lapsed (another worker holds the job) rolls
    // the new job back.
    if ((await completeInTransaction(w.em, SEND_QUEUE, [claim])) === 0) throw new LapsedClaim();
    return true;
  }).catch((e) => {
    if (e instanceof LapsedClaim) return false;
    throw e;
  });
  if (replaced)
    scopeLog().debug({ message: messageId('outbound', m.id), earlier: earlierId }, 'chat send waits');
  return true;
}

class LapsedClaim extends Error {}

/** What the network is given, rebuilt from the message as recorded (send.ts decided it). */
async function outboundOf(em: EntityManager, deps: SendWorkerDeps, m: Message): Promise<OutboundMessage> {
  const from = m.fromPhone ?? '';
  const to = m.toPhone ?? m.patientPhone;
  const reference = messageId('outbound', m.id);
  const clinicId = (m.clinic as unknown as { id: number }).id;
  if ((m.type === 'image' || m.type === 'document') && m.mediaPath) {
    if (!deps.mediaLink) throw new Error('This process has no media links to send media with.');
    return {
      kind: 'media',
      from,
      to,
      template: m.templateName ?? '',
      mediaType: m.type,
      mediaUrl: deps.mediaLink(clinicId, m.mediaPath, m.mediaFilename ?? null, m.mediaMime ?? '').url,
      filename: m.mediaFilename ?? null,
      reference,
    };
  }
  if (!m.templateName) return { kind: 'text', from, to, text: m.text ?? '', reference };
  const template = await em.findOne(
    Template,
    { clinic: clinicId, name: m.templateName },
    { filters: false, fields: ['language'] },
  );
  return {
    kind: 'template',
    from,
    to,
    template: m.templateName,
    language: template?.language ?? null,
    params: m.templateParams ?? [],
    reference,
  };
}

/**
 * Fails a message the network never took, as a failed receipt would (spec: queued → failed),
 * with its chat.message.failed event; a message sent or failed meanwhile is left as it is.
 */
async function failSend(deps: SendWorkerDeps, job: SendJob, reason: string): Promise<void> {
  await atWriteTime(deps.clock.now(), () =>
    chatChange(deps.em.fork(), job.clinic, async (change) => {
      const m = await change.em.findOne(Message, job.message, {
        filters: false,
        populate: ['conversation'],
      });
      if (!m || m.networkMessageId || m.failedAt) return;
      m.failedAt = change.now;
      m.failureReason = reason;
      change.touch(m);
      change.record(messageEvent('chat.message.failed', m));
    }),
  );
  scopeLog().warn({ message: messageId('outbound', job.message), reason }, 'chat send failed');
}

/** The message of the error a failed attempt stored (pg-boss keeps it as the job's output). */
function lastError(output: unknown): string | null {
  if (!output || typeof output !== 'object') return null;
  const message = (output as { message?: unknown }).message;
  return typeof message === 'string' && message ? message.slice(0, 500) : null;
}
