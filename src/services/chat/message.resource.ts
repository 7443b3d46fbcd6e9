import type { messageTypes } from '../../entities/index.ts';
import { defineEnum } from '../../lib/enums.ts';
import { messageId } from '../../lib/ids.ts';
import { toInternational, toLocal } from '../../lib/phone.ts';
import { isoOf } from '../../lib/timestamps.ts';
import { Direction } from '../closed-sets.ts';
import { defineResource, defineShape, f, type PresentContext, type Row } from '../resource.ts';
import { MatchedPatients } from './matched-patients.ts';
import { type MessageTimes, outboundStatus } from './message-status.ts';

/** The closed sets of the chat inbox (src/lib/enums.ts): REST's values, GraphQL's enums. */
export const MessageType = defineEnum('MessageType', 'What a message holds.', {
  text: 'Text only.',
  image: 'An image, with its caption as the text.',
  document: 'A document (PDF when the clinic sends it).',
  audio: 'An audio clip or voice note.',
  video: 'A video.',
  sticker: 'A sticker.',
  contacts: 'One or more contact cards.',
} satisfies Record<(typeof messageTypes)[number], string>);

export const MessageStatus = defineEnum(
  'MessageStatus',
  "Where a message stands: received for inbound; an outbound one's delivery, from its receipts.",
  {
    received: 'Inbound: the patient wrote it and the clinic has it.',
    queued: 'Outbound: recorded, not yet accepted by the messaging network.',
    sent: 'Outbound: accepted by the messaging network.',
    delivered: "Outbound: reached the patient's handset.",
    read: 'Outbound: opened by the patient (never reported when the patient turned read receipts off).',
    failed: "Outbound: delivery failed for good; the message's failure reason says why.",
  },
);

export const DeliveryMode = defineEnum(
  'DeliveryMode',
  'How a sent message goes out to the messaging network.',
  {
    free_text: 'As it is, inside the 24-hour window the patient opened by writing.',
    template_fallback:
      "The window is closed: the text wrapped in the clinic's marketing template (billed as marketing).",
    template: 'A template by name, or media (which goes out in the clinic’s image or document template).',
  },
);

/** Media a patient sends (the sandbox plays one: src/services/chat/patient-side.ts). */
export const InboundMediaType = defineEnum('InboundMediaType', 'The kinds of media a patient can send.', {
  image: 'An image.',
  document: 'A document.',
  audio: 'An audio clip or voice note.',
  video: 'A video.',
  sticker: 'A sticker.',
});

/** Media the clinic sends (POST /v1/chat/messages `media.type`). */
export const OutboundMediaType = defineEnum('OutboundMediaType', 'The kinds of media the clinic can send.', {
  image: 'An image, JPEG or PNG.',
  document: 'A document, PDF.',
});

const time = (v: unknown) => (v == null ? null : isoOf(v as string));

export const MessageMedia = defineShape(
  'MessageMedia',
  {
    available: f.key('available', 'Boolean', { description: 'Whether the message has media.' }),
    type: f.key('type', 'String', {
      nullable: true,
      enum: MessageType,
      description: 'image, document, audio, video or sticker.',
    }),
  },
  'Whether the message has media, and its kind; the link is fetched from /v1/chat/messages/{id}/media.',
);

export const MessageReactions = defineShape(
  'MessageReactions',
  {
    patient: f.key('patient', 'String', {
      nullable: true,
      description: "The patient's emoji; null when none.",
    }),
    clinic: f.key('clinic', 'String', { nullable: true, description: "The clinic's emoji; null when none." }),
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
      description: "Delivery failed; the message's failure reason says why.",
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
const phoneAs = (prop: 'fromPhone' | 'toPhone', description: string) =>
  f.derived(
    [prop, 'direction'],
    'String',
    (row: Row, pc: PresentContext) =>
      row.direction === 'outbound' ? toInternational(row[prop]) : toLocal(row[prop], pc.country),
    { nullable: true, description },
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
    conversation_id: f.ref('conversation', 'Conversation', {
      nullable: true,
      description: 'The conversation (conv_<n>) of the patient phone.',
    }),
    direction: f.column('direction', 'String', { enum: Direction, description: 'inbound or outbound.' }),
    type: f.column('type', 'String', {
      enum: MessageType,
      description: 'text, image, document, audio, video, sticker or contacts.',
    }),
    status: f.derived(
      ['direction', 'sentAt', 'deliveredAt', 'readAt', 'failedAt'],
      'String',
      (row) => (row.direction === 'inbound' ? 'received' : outboundStatus(row as MessageTimes)),
      {
        enum: MessageStatus,
        description: 'inbound: received. outbound: queued, sent, delivered, read or failed.',
      },
    ),
    from_phone: phoneAs(
      'fromPhone',
      "The sender's number: the clinic's, international, when outbound; the patient's, local, when inbound.",
    ),
    to_phone: phoneAs(
      'toPhone',
      "The recipient's number: the patient's, international, when outbound; the clinic's, local, when inbound.",
    ),
    patient_phone: f.column('patientPhone', 'String', {
      nullable: true,
      convert: (v, pc) => toLocal(v, pc.country),
      description: 'The patient side in either direction, local form.',
    }),
    text: f.column('text', 'String', { nullable: true, description: 'Body, or caption for media.' }),
    media: f.derived(
      ['mediaType', 'mediaPath'],
      MessageMedia,
      (row) => ({ available: row.mediaPath != null, type: row.mediaType ?? null }),
      { description: 'Whether the message has media, and its kind.' },
    ),
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
    reactions: f.derived(
      ['reactionPatient', 'reactionClinic'],
      MessageReactions,
      (row) => ({ patient: row.reactionPatient ?? null, clinic: row.reactionClinic ?? null }),
      { description: "Each side's current emoji on the message." },
    ),
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
    created_at: f.time('createdAt', {
      nullable: true,
      description: 'When the message was recorded: received, or queued to be sent.',
    }),
    updated_at: f.time('updatedAt', { nullable: true, description: 'Bumps on each delivery receipt.' }),
  },
});
