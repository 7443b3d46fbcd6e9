import { messageId } from '../../lib/ids.ts';
import { toInternational, toLocal } from '../../lib/phone.ts';
import { isoOf } from '../../lib/timestamps.ts';
import { defineResource, defineShape, f, type PresentContext, type Row } from '../resource.ts';
import { MatchedPatients } from './matched-patients.ts';
import { type MessageTimes, outboundStatus } from './message-status.ts';

const time = (v: unknown) => (v == null ? null : isoOf(v as string));

export const MessageMedia = defineShape(
  'MessageMedia',
  {
    available: f.key('available', 'Boolean'),
    type: f.key('type', 'String', {
      nullable: true,
      description: 'image, document, audio, video or sticker.',
    }),
  },
  'Whether the message has media, and its kind; the link is fetched from /v1/chat/messages/{id}/media.',
);

export const MessageReactions = defineShape(
  'MessageReactions',
  {
    patient: f.key('patient', 'String', { nullable: true }),
    clinic: f.key('clinic', 'String', { nullable: true }),
  },
  'The current emoji of each side (one per side, replaced on change; not a history).',
);

export const MessageTimestamps = defineShape(
  'MessageTimestamps',
  {
    sent_at: f.key('sent_at', 'String', {
      nullable: true,
      description: 'Accepted by the messaging network.',
    }),
    delivered_at: f.key('delivered_at', 'String', { nullable: true, description: 'Reached the handset.' }),
    read_at: f.key('read_at', 'String', {
      nullable: true,
      description: 'Opened by the patient; never set when the patient turned read receipts off.',
    }),
    failed_at: f.key('failed_at', 'String', {
      nullable: true,
      description: 'Delivery failed; see failure_reason.',
    }),
  },
  'Outbound delivery times.',
);

const timestampsOf = (row: Row) => ({
  sent_at: time(row.sentAt),
  delivered_at: time(row.deliveredAt),
  read_at: time(row.readAt),
  failed_at: time(row.failedAt),
});

/**
 * Phones (docs/chat.md): the patient side is local (`0…`); an outbound message's from/to are
 * international, as the network has them; an inbound one's are local, as stored for the clinic.
 */
const phoneAs = (prop: 'fromPhone' | 'toPhone') =>
  f.derived(
    [prop, 'direction'],
    'String',
    (row: Row, pc: PresentContext) =>
      row.direction === 'outbound' ? toInternational(row[prop]) : toLocal(row[prop], pc.country),
    { nullable: true },
  );

export const Message = defineResource({
  name: 'Message',
  kind: 'Message',
  scopes: ['chat:read'],
  description: 'A chat message, inbound or outbound.',
  fields: {
    id: f.id({
      needs: ['direction'],
      format: (row) => messageId(row.direction, row.id),
      description: 'in_<n> inbound, out_<n> outbound; the whole string is the id.',
    }),
    conversation_id: f.ref('conversation', 'Conversation', { nullable: true }),
    direction: f.column('direction', 'String', { description: 'inbound or outbound.' }),
    type: f.column('type', 'String', {
      description: 'text, image, document, audio, video, sticker or contacts.',
    }),
    status: f.derived(
      ['direction', 'sentAt', 'deliveredAt', 'readAt', 'failedAt'],
      'String',
      (row) => (row.direction === 'inbound' ? 'received' : outboundStatus(row as MessageTimes)),
      { description: 'inbound: received. outbound: queued, sent, delivered, read or failed.' },
    ),
    from_phone: phoneAs('fromPhone'),
    to_phone: phoneAs('toPhone'),
    patient_phone: f.column('patientPhone', 'String', {
      nullable: true,
      convert: (v, pc) => toLocal(v, pc.country),
      description: 'The patient side in either direction, local form.',
    }),
    text: f.column('text', 'String', { nullable: true, description: 'Body, or caption for media.' }),
    media: f.derived(['mediaType', 'mediaPath'], MessageMedia, (row) => ({
      available: row.mediaPath != null,
      type: row.mediaType ?? null,
    })),
    patients: MatchedPatients.field('patientPhone'),
    template: f.column('templateName', 'String', {
      nullable: true,
      description: 'Outbound only: the approved template used, if any.',
    }),
    replied_to_id: f.derived(
      ['repliedTo'],
      'String',
      (row) => (row.repliedTo?.id == null ? null : messageId('outbound', row.repliedTo.id)),
      { nullable: true, description: 'Inbound only: the outbound message replied to.' },
    ),
    reactions: f.derived(['reactionPatient', 'reactionClinic'], MessageReactions, (row) => ({
      patient: row.reactionPatient ?? null,
      clinic: row.reactionClinic ?? null,
    })),
    failure_reason: f.column('failureReason', 'String', {
      nullable: true,
      description: 'Outbound only: why the network rejected it.',
    }),
    timestamps: f.derived(
      ['direction', 'sentAt', 'deliveredAt', 'readAt', 'failedAt'],
      MessageTimestamps,
      (row) => (row.direction === 'inbound' ? null : timestampsOf(row)),
      { nullable: true, description: 'Outbound only; null for inbound.' },
    ),
    created_at: f.time('createdAt', { nullable: true }),
    updated_at: f.time('updatedAt', { nullable: true, description: 'Bumps on each delivery receipt.' }),
  },
});
