import type { GraphQLResolveInfo } from 'graphql';
import { allOf } from '../../auth/scopes.ts';
import { relayPageArgs } from '../../db/list.ts';
import { AppError } from '../../lib/errors.ts';
import type { RequestContext } from '../../lib/request-context.ts';
import { Conversation } from '../../services/chat/conversation.resource.ts';
import {
  conversationsOfPatient,
  getConversation,
  listConversations,
} from '../../services/chat/conversations.ts';
import { getMessageMedia, MediaLink } from '../../services/chat/media.ts';
import { Message } from '../../services/chat/message.resource.ts';
import {
  getMessage,
  listConversationMessages,
  listMessages,
  listPatientMessages,
  messagesOfConversation,
  messagesOfPatient,
} from '../../services/chat/messages.ts';
import { Template } from '../../services/chat/template.resource.ts';
import { listTemplates } from '../../services/chat/templates.ts';
import { Patient } from '../../services/patients/patient.resource.ts';
import { CORE, type Resource, type Row, viewFor, viewOfSelection } from '../../services/resource.ts';
import { builder } from '../builder.ts';
import { PatientType } from '../patients/types.ts';
import { objectType } from '../resource-types.ts';
import { selectedFields } from '../selection.ts';
import { connectionField, restList, restOne, restPage, toConnection, toRestPage } from '../shared.ts';
import { ConversationType, MessageType, TemplateType } from './types.ts';

/**
 * The chat inbox's reads (spec, Chat: read): each list is a Relay connection on /graphql and a
 * page under /v1, over the same service call; filters are checked by the services (422 naming
 * the parameter) for both.
 */
const chatRead = allOf(Conversation.scopes);
const patientChat = allOf([...Patient.scopes, ...Message.scopes]);

const selection = (resource: Resource, info: GraphQLResolveInfo) =>
  viewOfSelection(resource, selectedFields(info, ['edges', 'node']));

const notFoundIsNull = async <T>(p: Promise<T>): Promise<T | null> => {
  try {
    return await p;
  } catch (e) {
    if (e instanceof AppError && e.code === 'not_found') return null;
    throw e;
  }
};

const conversationArgs = (t: any) => ({
  phone: t.arg.string({ required: false, description: 'Separators ignored.' }),
  is_handled: t.arg.boolean({ required: false }),
  updated_since: t.arg.string({
    required: false,
    description: 'ISO 8601. Ascending mutation order: any change moves a conversation to the end.',
  }),
});

const messageArgs = (t: any) => ({
  direction: t.arg.string({ required: false, description: 'inbound or outbound.' }),
  type: t.arg.string({
    required: false,
    description: 'text, image, document, audio, video, sticker or contacts.',
  }),
  phone: t.arg.string({ required: false, description: 'The patient side (to or from); separators ignored.' }),
  from: t.arg.string({ required: false, description: 'ISO 8601; messages created at or after it.' }),
  to: t.arg.string({ required: false, description: 'ISO 8601; messages created before it.' }),
  updated_since: t.arg.string({
    required: false,
    description: 'ISO 8601. Ascending mutation order; catches receipts on older messages.',
  }),
});

// ---------- Public (GraphQL) ----------

builder.queryFields((t) => ({
  conversations: connectionField(t, ConversationType, {
    subGraphs: ['Public'],
    nullable: true,
    authScopes: chatRead,
    description: 'Most recent activity first; with updated_since, ascending mutation order.',
    args: conversationArgs(t),
    resolve: async (_root, args, ctx, info) => {
      const view = selection(Conversation, info);
      return toConnection(await listConversations(ctx, { ...args, ...relayPageArgs(args), view }));
    },
  }),
  conversation: t.field({
    type: ConversationType,
    subGraphs: ['Public'],
    nullable: true,
    authScopes: chatRead,
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) =>
      notFoundIsNull(getConversation(ctx, String(args.id), viewFor(Conversation, CORE))),
  }),
  messages: connectionField(t, MessageType, {
    subGraphs: ['Public'],
    nullable: true,
    authScopes: chatRead,
    description:
      'Inbound and outbound across conversations, newest first; with updated_since, ascending mutation order.',
    args: messageArgs(t),
    resolve: async (_root, args, ctx, info) => {
      return toConnection(
        await listMessages(ctx, { ...args, ...relayPageArgs(args), view: selection(Message, info) }),
      );
    },
  }),
  message: t.field({
    type: MessageType,
    subGraphs: ['Public'],
    nullable: true,
    authScopes: chatRead,
    args: { id: t.arg.id({ required: true, description: 'in_<n> or out_<n>.' }) },
    resolve: (_root, args, ctx) => notFoundIsNull(getMessage(ctx, String(args.id), viewFor(Message, CORE))),
  }),
  templates: t.field({
    type: [TemplateType],
    subGraphs: ['Public'],
    nullable: true,
    authScopes: allOf(Template.scopes),
    args: { sendable: t.arg.boolean({ required: false, description: 'true: only sendable ones.' }) },
    resolve: (_root, args, ctx) => listTemplates(ctx, { ...args, view: viewFor(Template, CORE) }),
  }),
}));

builder.objectFields(MessageType, (t) => ({
  media_link: t.field({
    type: MediaLinkType,
    subGraphs: ['Public'],
    nullable: true,
    authScopes: chatRead,
    description:
      'A signed link to the media, valid about 10 hours (GET /v1/chat/messages/{id}/media); null when the message has none.',
    resolve: async (m: Row, _args: unknown, ctx: RequestContext) => {
      if (!m.media?.available) return null;
      return notFoundIsNull(getMessageMedia(ctx, ctx.services.chat, m.id));
    },
  }),
}));

builder.objectFields(ConversationType, (t) => ({
  messages: connectionField(t, MessageType, {
    subGraphs: ['Public'],
    nullable: true,
    authScopes: chatRead,
    description: 'Inbound and outbound merged, newest first.',
    args: messageArgs(t),
    resolve: async (c: Row, args: any, ctx: RequestContext, info: GraphQLResolveInfo) => {
      const view = selection(Message, info);
      return toConnection(await messagesOfConversation(ctx, c.id, { ...args, ...relayPageArgs(args), view }));
    },
  }),
}));

builder.objectFields(PatientType, (t) => ({
  chat_conversations: connectionField(t, ConversationType, {
    subGraphs: ['Public'],
    nullable: true,
    authScopes: patientChat,
    description: "The conversation of the patient's phone (none when the patient has no phone).",
    args: {
      is_handled: t.arg.boolean({ required: false }),
      updated_since: t.arg.string({ required: false }),
    },
    resolve: async (p: Row, args: any, ctx: RequestContext, info: GraphQLResolveInfo) => {
      const view = selection(Conversation, info);
      return toConnection(await conversationsOfPatient(ctx, p.id, { ...args, ...relayPageArgs(args), view }));
    },
  }),
  chat_messages: connectionField(t, MessageType, {
    subGraphs: ['Public'],
    nullable: true,
    authScopes: patientChat,
    description:
      "Messages of the patient's phone, newest first (the same filters as messages); empty when the patient has no phone.",
    args: messageArgs(t),
    resolve: async (p: Row, args: any, ctx: RequestContext, info: GraphQLResolveInfo) => {
      const view = selection(Message, info);
      return toConnection(await messagesOfPatient(ctx, p.id, { ...args, ...relayPageArgs(args), view }));
    },
  }),
}));

// ---------- Rest (served under /v1: src/rest/direct.ts) ----------

const MediaLinkType = objectType(MediaLink);
const MediaLinkBody = restOne('MediaLinkBody', MediaLinkType);
const ConversationPage = restPage('ConversationPage', ConversationType);
const ConversationBody = restOne('ConversationBody', ConversationType);
const MessagePage = restPage('MessagePage', MessageType);
const MessageBody = restOne('MessageBody', MessageType);
const TemplateList = restList('TemplateList', TemplateType);

builder.queryFields((t) => {
  const page = {
    limit: t.arg({ type: 'Limit', required: false, description: 'Page size, 1 to 100 (default 25).' }),
    cursor: t.arg.string({ required: false, description: 'next_cursor of the previous page, verbatim.' }),
  };
  const restMessageArgs = { ...messageArgs(t), ...page };
  const conversationView = viewFor(Conversation, CORE);
  const messageView = viewFor(Message, CORE);
  return {
    listConversations: t.field({
      type: ConversationPage,
      subGraphs: ['Rest'],
      authScopes: chatRead,
      args: {
        phone: t.arg.string({ required: false }),
        is_handled: t.arg.string({ required: false, description: 'true or false.' }),
        updated_since: t.arg.string({ required: false }),
        ...page,
      },
      resolve: async (_root, args, ctx) =>
        toRestPage(await listConversations(ctx, { ...args, view: conversationView })),
    }),
    getConversation: t.field({
      type: ConversationBody,
      subGraphs: ['Rest'],
      authScopes: chatRead,
      args: { id: t.arg.string({ required: true }) },
      resolve: async (_root, args, ctx) => ({ data: await getConversation(ctx, args.id, conversationView) }),
    }),
    listConversationMessages: t.field({
      type: MessagePage,
      subGraphs: ['Rest'],
      authScopes: chatRead,
      args: { id: t.arg.string({ required: true }), ...restMessageArgs },
      resolve: async (_root, args, ctx) =>
        toRestPage(await listConversationMessages(ctx, args.id, { ...args, view: messageView })),
    }),
    listMessages: t.field({
      type: MessagePage,
      subGraphs: ['Rest'],
      authScopes: chatRead,
      args: restMessageArgs,
      resolve: async (_root, args, ctx) =>
        toRestPage(await listMessages(ctx, { ...args, view: messageView })),
    }),
    getMessage: t.field({
      type: MessageBody,
      subGraphs: ['Rest'],
      authScopes: chatRead,
      args: { id: t.arg.string({ required: true }) },
      resolve: async (_root, args, ctx) => ({ data: await getMessage(ctx, args.id, messageView) }),
    }),
    getMessageMedia: t.field({
      type: MediaLinkBody,
      subGraphs: ['Rest'],
      authScopes: chatRead,
      description: "A signed link to the message's media, valid about 10 hours; 404 when it has none.",
      args: { id: t.arg.string({ required: true }) },
      resolve: async (_root, args, ctx) => ({ data: await getMessageMedia(ctx, ctx.services.chat, args.id) }),
    }),
    listTemplates: t.field({
      type: TemplateList,
      subGraphs: ['Rest'],
      authScopes: allOf(Template.scopes),
      args: { sendable: t.arg.string({ required: false, description: 'true: only sendable ones.' }) },
      resolve: async (_root, args, ctx) => ({
        data: await listTemplates(ctx, { ...args, view: viewFor(Template, CORE) }),
      }),
    }),
    listPatientChatMessages: t.field({
      type: MessagePage,
      subGraphs: ['Rest'],
      authScopes: patientChat,
      args: { id: t.arg.string({ required: true, description: 'Patient id.' }), ...page },
      resolve: async (_root, args, ctx) =>
        toRestPage(await listPatientMessages(ctx, args.id, { ...args, view: messageView })),
    }),
  };
});
