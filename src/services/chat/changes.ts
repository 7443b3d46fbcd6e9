import type { EntityManager } from '@mikro-orm/postgresql';
import { Clinic, type Conversation, type Message } from '../../entities/index.ts';
import { clockNow } from '../../lib/request-context.ts';
import { clinicWrite, type KnownClinic, type Write, type WriteReader } from '../unit-of-work.ts';

/**
 * Every change to the chat inbox goes through `chatChange`: the one unit of work of writes
 * (src/services/unit-of-work.ts) that first draws the clinic's next mutation number
 * (`clinic.chat_seq`, by `update … returning`). That row stays locked until the transaction
 * commits, so a clinic's changes commit in the order of their numbers and a reader syncing with
 * `updated_since` (ascending `seq`) never passes a number that a slower transaction is still to
 * commit. The price is that a clinic's chat writes run one at a time, which a clinic's message
 * rate allows (docs/chat.md, Incremental sync).
 */
export interface ChatChange extends Write {
  seq: number;
  /** Marks a message changed: its and its conversation's `seq` and `updated_at` move. */
  touch(message: Message): void;
  /** Marks a conversation changed (handled, a new message). */
  touchConversation(conversation: Conversation): void;
}

export async function chatChange<T>(
  em: EntityManager,
  clinic: number | KnownClinic,
  work: (change: ChatChange) => Promise<T>,
): Promise<T>;
/** With `answer`: read after the unit of work's flush, as clinicWrite's (a new message's id). */
export async function chatChange<T, A>(
  em: EntityManager,
  clinic: number | KnownClinic,
  work: (change: ChatChange) => Promise<T>,
  answer: (reader: WriteReader, result: T) => Promise<A>,
): Promise<A>;
export async function chatChange<T, A>(
  em: EntityManager,
  clinic: number | KnownClinic,
  work: (change: ChatChange) => Promise<T>,
  answer?: (reader: WriteReader, result: T) => Promise<A>,
): Promise<T | A> {
  const run = async (write: Write) => work(await chatChangeIn(write));
  return answer ? clinicWrite(em, clinic, clockNow(), run, answer) : clinicWrite(em, clinic, clockNow(), run);
}

/**
 * The chat change of a write already under way (a `defineWrite` of chat: handled, a reaction):
 * draws the clinic's next mutation number in its transaction. Drawn before the write changes a
 * chat row, so the clinic's lock is always taken first, as `chatChange` takes it.
 */
export async function chatChangeIn(write: Write): Promise<ChatChange> {
  const rows = await write.em
    .getConnection()
    .execute<{ chat_seq: string }[]>(
      'update "clinic" set "chat_seq" = "chat_seq" + 1 where "id" = ? returning "chat_seq"',
      [write.clinicId],
      'all',
      write.em.getTransactionContext(),
    );
  if (!rows.length) throw new Error(`No clinic ${write.clinicId}.`);
  const seq = Number(rows[0].chat_seq);
  const { now } = write;
  const change: ChatChange = {
    ...write,
    seq,
    touch(message) {
      message.seq = seq;
      message.updatedAt = now;
      change.touchConversation(message.conversation as Conversation);
    },
    touchConversation(conversation) {
      conversation.seq = seq;
      conversation.updatedAt = now;
    },
  };
  return change;
}

/** A reference to the clinic for rows created in a change. */
export const clinicRef = (change: ChatChange) => change.em.getReference(Clinic, change.clinicId);

/**
 * The preview of a message in its conversation's list entry: its text, whole (spec: "text of
 * most recent message"), or null for a message without text (media without a caption, a sticker).
 */
export function previewOf(m: { text?: string | null }): string | null {
  return m.text || null;
}

/** Records a new message's times on its conversation (out-of-order arrivals never move them back). */
export function noteMessage(conversation: Conversation, m: Message): void {
  const at = m.createdAt;
  const later = (t: Date | null | undefined) => !t || new Date(t) <= at;
  if (later(conversation.lastActivityAt)) {
    conversation.lastActivityAt = at;
    conversation.lastMessagePreview = previewOf(m);
  }
  if (m.direction === 'inbound' && later(conversation.lastInboundAt)) conversation.lastInboundAt = at;
  if (m.direction === 'outbound' && later(conversation.lastOutboundAt)) conversation.lastOutboundAt = at;
}
