import type { EntityManager } from '@mikro-orm/postgresql';
import { liveSendJob, sendGroup } from './send-jobs.ts';

/**
 * Outbound messages the network has not taken yet (no network id) and that have not failed,
 * read from our own table on its existing indexes, each query bounded by time: pg-boss's job
 * states say nothing of ordering (a job waiting to retry frees its conversation's slot). Only
 * whether such a message will still be sent is asked of pg-boss's table (liveSendJob).
 */

/**
 * How far before a message an earlier one of its conversation is still waited for. Two sends
 * whose order matters (a media message and its caption, a patient's reply and its follow-up) are
 * recorded moments apart; a message left unsent from long before (its job lost) must not hold
 * the conversation up.
 */
export const ORDER_LOOKBACK_MS = 60 * 60 * 1000;

/**
 * How recently a message must have been recorded for a receipt with an unknown network id to be
 * held as possibly its (503): waiting behind an earlier message of its conversation takes up to
 * ORDER_WAIT_MS (15 minutes, send-worker.ts), then its own 7 attempts up to about 10 minutes
 * (send-jobs.ts, SEND_RETRY, with jitter) and each attempt up to NETWORK_TIMEOUT_MS (30 s):
 * about 29 minutes at worst, and a margin.
 */
export const HANDOFF_WINDOW_MS = 35 * 60 * 1000;

/**
 * An earlier outbound message of the same conversation, still unsent and not failed, that a live
 * send job will still move on, if any: `message` must not go out before it. One that nothing
 * will send (its job lost) is no reason to wait: it would hold the conversation up for nothing
 * (issue 25: a seeded `queued` message without a job held the demo's first conversation for
 * ORDER_WAIT_MS). Earlier is by id, the order the clinic's chat lock recorded them in; the
 * created_at range keeps the scan to the conversation's recent messages (index conversation_id,
 * created_at, id).
 */
export async function earlierUnsent(
  em: EntityManager,
  message: { id: number; conversationId: number; createdAt: Date },
): Promise<number | null> {
  const created = new Date(message.createdAt);
  const rows = await em.getConnection().execute<{ id: number }[]>(
    `select "id" from "message"
      where "conversation_id" = ? and "created_at" >= ? and "created_at" <= ? and "id" < ?
        and "direction" = 'outbound' and "network_message_id" is null and "failed_at" is null
        and ${liveSendJob('"message"."id"')}
      order by "id" limit 1`,
    [
      message.conversationId,
      new Date(created.getTime() - ORDER_LOOKBACK_MS),
      created,
      message.id,
      sendGroup(message.conversationId).id,
    ],
  );
  return rows.length ? Number(rows[0].id) : null;
}

/**
 * Whether one of the clinic's recent outbound messages has not had its network id saved yet: a
 * receipt for a network id we do not know may be for it (the network reports before the worker
 * saves the id). Index clinic_id, created_at.
 */
export async function handoffPending(em: EntityManager, clinicId: number, now: Date): Promise<boolean> {
  const rows = await em.getConnection().execute(
    `select 1 from "message"
      where "clinic_id" = ? and "created_at" >= ?
        and "direction" = 'outbound' and "network_message_id" is null and "failed_at" is null
      limit 1`,
    [clinicId, new Date(now.getTime() - HANDOFF_WINDOW_MS)],
  );
  return rows.length > 0;
}
