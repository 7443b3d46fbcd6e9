import { type EntityManager, UniqueConstraintViolationException } from '@mikro-orm/postgresql';
import { Clinic, Conversation, Message } from '../../entities/index.ts';
import type { ClinicMode } from '../../lib/clinic-mode.ts';
import { AppError } from '../../lib/errors.ts';
import { messageId, toId } from '../../lib/ids.ts';
import { clockNow, requestLogger } from '../../lib/request-context.ts';
import type { NetworkCallback } from '../../network/adapter.ts';
import { type ChatChange, chatChange, clinicRef, noteMessage } from './changes.ts';
import { messageEvent } from './events.ts';
import { applyReceipt } from './message-status.ts';
import { handoffPending } from './unsent.ts';

/**
 * What the messaging network tells the service (its signed callback, src/server/network-callback.ts;
 * the CLI's simulated patient side calls this too): inbound messages, staff messages sent from
 * the clinic's own phone, patients' reactions and delivery receipts. Each is recorded once: the
 * network may deliver a callback twice, or several copies at once, and a receipt or a reaction
 * may come after a later one. Every lookup by network id is within the clinic the event names.
 */
export interface Recorded {
  status: 'recorded' | 'duplicate' | 'ignored';
  id?: string;
  conversation_id?: string;
  reason?: string;
}

/**
 * Copies a message's media from the network into the service's store under the clinic's URL
 * policy (its mode: src/lib/address-policy.ts), typed by its bytes, never by the type the network
 * declares; returns the store key.
 */
export type MediaCopier = (clinicId: number, mode: ClinicMode, url: string) => Promise<string>;

const noFilters = { filters: false } as const;

export async function recordNetworkEvent(
  em: EntityManager,
  event: NetworkCallback,
  copyMedia?: MediaCopier,
): Promise<Recorded> {
  if (event.type === 'receipt') return recordReceipt(em, event);
  const clinic = await em.findOne(Clinic, { phone: event.clinic_phone });
  if (!clinic) return ignored(`No clinic has the number ${event.clinic_phone}.`);
  if (event.type === 'reaction') return recordReaction(em, clinic, event);
  const known = () =>
    em.findOne(Message, { clinic: clinic.id, networkMessageId: event.network_message_id }, noFilters);
  const duplicate = (m: Message): Recorded => ({ status: 'duplicate', ...idsOf(m) });
  const first = await known();
  if (first) return duplicate(first);
  // Fetched before the transaction: a slow media server must not hold the clinic's chat lock.
  const mediaKey = event.media && copyMedia ? await copyMedia(clinic.id, clinic.mode, event.media.url) : null;
  try {
    return await recordMessage(em, clinic, event, mediaKey, async (change) => {
      // Under the clinic's chat lock: a copy of this callback that arrived meanwhile (its media
      // download widening the gap) has committed by now.
      const meanwhile = await change.em.findOne(
        Message,
        { clinic: clinic.id, networkMessageId: event.network_message_id },
        noFilters,
      );
      return meanwhile ? duplicate(meanwhile) : null;
    });
  } catch (e) {
    // The unique (clinic, network id) index is what guarantees one message per network id; a
    // copy recorded by another path between the check and the insert lands here.
    if (!(e instanceof UniqueConstraintViolationException)) throw e;
    const m = await known();
    if (!m) throw e;
    return duplicate(m);
  }
}

/**
 * A new message in the clinic's unit of work (chatChange): its event recorded with it, the answer
 * (its ids) read once the unit of work has flushed it.
 */
function recordMessage(
  em: EntityManager,
  clinic: Clinic,
  event: Extract<NetworkCallback, { type: 'message.inbound' | 'message.echo' }>,
  mediaKey: string | null,
  recordedAlready: (change: ChatChange) => Promise<Recorded | null>,
): Promise<Recorded> {
  const clinicId = clinic.id;
  return chatChange(
    em,
    clinic,
    async (change): Promise<Recorded | Message> => {
      const already = await recordedAlready(change);
      if (already) return already;
      const inbound = event.type === 'message.inbound';
      const patientPhone = inbound ? event.from : event.to;
      const conversation = await conversationOf(change, patientPhone, event.clinic_phone);
      if (inbound && event.profile_name) conversation.displayName = event.profile_name;
      const repliedTo =
        inbound && event.reply_to_network_message_id
          ? await change.em.findOne(
              Message,
              {
                clinic: clinicId,
                direction: 'outbound',
                networkMessageId: event.reply_to_network_message_id,
              },
              noFilters,
            )
          : null;
      const at = new Date(event.at);
      const message = change.em.create(Message, {
        clinic: clinicRef(change),
        conversation,
        direction: inbound ? 'inbound' : 'outbound',
        type: event.message_type,
        fromPhone: inbound ? event.from : event.clinic_phone,
        toPhone: inbound ? event.clinic_phone : event.to,
        patientPhone,
        text: event.text,
        mediaType: event.media ? event.message_type : null,
        mediaMime: event.media?.mime_type ?? null,
        mediaPath: mediaKey,
        mediaFilename: null,
        networkMessageId: event.network_message_id,
        repliedTo,
        // Staff wrote from the clinic's phone: the network accepted it already.
        sentAt: inbound ? null : at,
        seq: change.seq,
        createdAt: at,
        updatedAt: change.now,
      });
      noteMessage(conversation, message);
      // A patient writing again needs someone's attention (docs/chat.md, Handled).
      if (inbound) conversation.isHandled = false;
      change.touch(message);
      // Staff wrote from the clinic's own phone: the spec's "appears shortly after as sent".
      change.record(messageEvent(inbound ? 'chat.message.received' : 'chat.message.sent', message));
      return message;
    },
    async (_reader, done) => (done instanceof Message ? { status: 'recorded', ...idsOf(done) } : done),
  );
}

/** The conversation of a patient phone, created on its first message. */
export async function conversationOf(
  change: ChatChange,
  patientPhone: string,
  clinicPhone: string | null,
): Promise<Conversation> {
  const found = await change.em.findOne(Conversation, { clinic: change.clinicId, patientPhone }, noFilters);
  if (found) {
    if (clinicPhone && !found.clinicPhone) found.clinicPhone = clinicPhone;
    return found;
  }
  return change.em.create(Conversation, {
    clinic: clinicRef(change),
    patientPhone,
    clinicPhone,
    displayName: null,
    lastMessagePreview: null,
    lastActivityAt: null,
    lastInboundAt: null,
    lastOutboundAt: null,
    isHandled: false,
    seq: change.seq,
    createdAt: change.now,
    updatedAt: change.now,
  });
}

/**
 * The clinic's message the network knows by `networkMessageId`, or null. The network may report
 * on a message (a receipt, the patient's reaction) before its send worker has saved the id the
 * network gave it: while one of the clinic's recent messages has no network id yet, a 503 has the
 * network try again later rather than the report being lost (unsent.ts, HANDOFF_WINDOW_MS).
 */
async function messageOfNetworkId(
  em: EntityManager,
  clinicId: number,
  networkMessageId: string,
  direction?: 'outbound',
): Promise<Message | null> {
  const lookup = () =>
    em.findOne(
      Message,
      { clinic: clinicId, networkMessageId, ...(direction ? { direction } : {}) },
      noFilters,
    );
  const found = await lookup();
  if (found) return found;
  if (await handoffPending(em, clinicId, clockNow()))
    throw new AppError(
      'service_unavailable',
      `The network id ${networkMessageId} is not known yet: a message of the clinic is being handed to the network. Retry shortly.`,
    );
  // Each statement sees what was committed when it began: the worker may have saved the id
  // between the lookup and the check (its commit is what ended the hand-off). Looked up again
  // after the check, the message is found if it is the clinic's.
  return lookup();
}

async function recordReceipt(
  em: EntityManager,
  event: Extract<NetworkCallback, { type: 'receipt' }>,
): Promise<Recorded> {
  const clinic = await em.findOne(Clinic, { phone: event.clinic_phone });
  if (!clinic) return ignored(`No clinic has the number ${event.clinic_phone}.`);
  // Receipts are about what the clinic sent, and only its own messages.
  const found = await messageOfNetworkId(em, clinic.id, event.network_message_id, 'outbound');
  if (!found) return ignored(`The clinic sent no message with the network id ${event.network_message_id}.`);
  const { id } = found;
  return chatChange(em, clinic, async (change) => {
    const m = (await change.em.findOne(Message, id, {
      ...noFilters,
      populate: ['conversation'],
    })) as Message;
    const iso = (d: Date | null | undefined) => (d ? new Date(d).toISOString() : null);
    const t = applyReceipt(
      {
        sent_at: iso(m.sentAt),
        delivered_at: iso(m.deliveredAt),
        read_at: iso(m.readAt),
        failed_at: iso(m.failedAt),
      },
      { status: event.status, at: event.at },
    );
    const date = (s: string | null) => (s ? new Date(s) : null);
    // An event only for a receipt that moved the message on: a duplicate changes no timestamp.
    const key = `${event.status}_at` as const;
    // Nor for progress reported after the message failed (its status stays failed).
    const fresh =
      t[key] !== null && iso(m[`${event.status}At`]) === null && (event.status === 'failed' || !m.failedAt);
    m.sentAt = date(t.sent_at);
    m.deliveredAt = date(t.delivered_at);
    m.readAt = date(t.read_at);
    m.failedAt = date(t.failed_at);
    if (event.status === 'failed' && event.failure_reason && !m.failureReason)
      m.failureReason = event.failure_reason;
    // Every receipt bumps updated_at, a duplicate too (spec).
    change.touch(m);
    if (fresh) change.record(messageEvent(`chat.message.${event.status}`, m));
    return { status: 'recorded' as const, ...idsOf(m) };
  });
}

/**
 * A patient's reaction, applied in the order of the network's `at`: a reaction older than the
 * one recorded (a replay of a signed callback, a late delivery) changes nothing. Only the
 * message's patient may react to it.
 */
async function recordReaction(
  em: EntityManager,
  clinic: Clinic,
  event: Extract<NetworkCallback, { type: 'reaction' }>,
): Promise<Recorded> {
  const found = await messageOfNetworkId(em, clinic.id, event.network_message_id);
  if (!found) return ignored(`No message has the network id ${event.network_message_id}.`);
  if (found.patientPhone !== event.from)
    throw new AppError(
      'validation_failed',
      `from: ${event.from} is not the patient of message ${event.network_message_id}; only its patient may react to it.`,
      { param: 'from' },
    );
  const at = new Date(event.at);
  return chatChange(em, clinic, async (change) => {
    const m = (await change.em.findOne(Message, found.id, {
      ...noFilters,
      populate: ['conversation'],
    })) as Message;
    const last = m.reactionPatientAt ? new Date(m.reactionPatientAt) : null;
    if (last && at <= last)
      return {
        status: 'ignored' as const,
        ...idsOf(m),
        reason: `A reaction of ${last.toISOString()} is newer than this one of ${event.at}.`,
      };
    m.reactionPatient = event.emoji;
    m.reactionPatientAt = at;
    change.touch(m);
    return { status: 'recorded' as const, ...idsOf(m) };
  });
}

function idsOf(m: Message) {
  const conversation = m.conversation as unknown as { id: number };
  return { id: messageId(m.direction, m.id), conversation_id: toId('Conversation', conversation.id) };
}

function ignored(reason: string): Recorded {
  requestLogger().warn({ reason }, 'network callback ignored');
  return { status: 'ignored', reason };
}
