import { defineEntity, p } from '@mikro-orm/core';
import { tenantColumns, timestamps } from './tenant.ts';

const ConversationSchema = defineEntity({
  name: 'Conversation',
  uniques: [{ properties: ['clinic', 'patientPhone'] }],
  indexes: [{ properties: ['clinic', 'seq'] }, { properties: ['clinic', 'lastActivityAt', 'id'] }],
  properties: {
    ...tenantColumns(),
    /** E.164 */
    patientPhone: p.string(),
    clinicPhone: p.string().nullable(),
    displayName: p.string().nullable(),
    lastMessagePreview: p.text().nullable(),
    lastActivityAt: p.datetime().nullable(),
    lastInboundAt: p.datetime().nullable(),
    lastOutboundAt: p.datetime().nullable(),
    isHandled: p.boolean().default(false),
    /** Mutation order within the clinic (services/chat/changes.ts): `updated_since` syncs by it. */
    seq: p.bigint('number').default(0),
    ...timestamps(),
  },
});
export class Conversation extends ConversationSchema.class {}
ConversationSchema.setClass(Conversation);

export const messageTypes = ['text', 'image', 'document', 'audio', 'video', 'sticker', 'contacts'] as const;

const MessageSchema = defineEntity({
  name: 'Message',
  // The network's id names one message of a clinic: a callback delivered twice records once.
  uniques: [{ properties: ['clinic', 'networkMessageId'] }],
  indexes: [
    { properties: ['conversation', 'createdAt', 'id'] },
    { properties: ['clinic', 'createdAt', 'id'] },
    { properties: ['clinic', 'patientPhone', 'createdAt', 'id'] },
    { properties: ['clinic', 'seq'] },
    // The media sweep's question: does a message refer to this file (src/media/orphans.ts)?
    {
      name: 'message_clinic_id_media_path_index',
      expression:
        'create index "message_clinic_id_media_path_index" on "message" ("clinic_id", "media_path") where "media_path" is not null',
    },
  ],
  properties: {
    ...tenantColumns(),
    conversation: () => p.manyToOne(Conversation),
    direction: p.enum(['inbound', 'outbound'] as const),
    type: p.enum(messageTypes),
    fromPhone: p.string().nullable(),
    /** The patient side in either direction, E.164 (phone filters, a patient's messages). */
    patientPhone: p.string(),
    toPhone: p.string().nullable(),
    text: p.text().nullable(),
    mediaType: p.string().nullable(),
    mediaMime: p.string().nullable(),
    mediaPath: p.string().nullable(),
    mediaFilename: p.string().nullable(),
    templateName: p.string().nullable(),
    templateParams: p.json<string[]>().nullable(),
    repliedTo: () => p.manyToOne(Message).nullable(),
    reactionPatient: p.string().nullable(),
    /** When the network says the patient reacted: an older reaction arriving later changes nothing. */
    reactionPatientAt: p.datetime().nullable(),
    reactionClinic: p.string().nullable(),
    failureReason: p.text().nullable(),
    networkMessageId: p.string().nullable(),
    sentAt: p.datetime().nullable(),
    deliveredAt: p.datetime().nullable(),
    readAt: p.datetime().nullable(),
    failedAt: p.datetime().nullable(),
    seq: p.bigint('number').default(0),
    ...timestamps(),
  },
});
export class Message extends MessageSchema.class {}
MessageSchema.setClass(Message);

const TemplateSchema = defineEntity({
  name: 'Template',
  uniques: [{ properties: ['clinic', 'name'] }],
  properties: {
    ...tenantColumns(),
    name: p.string(),
    displayName: p.string().nullable(),
    language: p.string().nullable(),
    modelType: p.string().nullable(),
    category: p.string().nullable(),
    status: p.string().nullable(),
    rejectionReason: p.string().nullable(),
    parameterCount: p.integer().nullable(),
    body: p.text().nullable(),
    header: p.json<unknown>().nullable(),
    footer: p.json<unknown>().nullable(),
    buttons: p.json<unknown>().nullable(),
    hasActiveVersion: p.boolean().default(true),
    /** What the clinic uses it for besides sends by name: `image`, `document` (media) or `fallback`. */
    role: p.string().nullable(),
    ...timestamps(),
  },
});
export class Template extends TemplateSchema.class {}
TemplateSchema.setClass(Template);
