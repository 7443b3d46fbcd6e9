import type { GraphQLResolveInfo } from 'graphql';
import { allOf } from '../../auth/scopes.ts';
import { relayPageArgs } from '../../db/list.ts';
import { AppError } from '../../lib/errors.ts';
import type { RequestContext } from '../../lib/request-context.ts';
import { Conversation } from '../../services/chat/conversation.resource.ts';
import {
  conversationsOfPatient,
  firstConversationsLimit,
  firstConversationsOfPatients,
  getConversation,
  listConversations,
} from '../../services/chat/conversations.ts';
import { getMessageMedia, MediaLink } from '../../services/chat/media.ts';
import { Message, MessageType as MessageTypes } from '../../services/chat/message.resource.ts';
import {
  firstMessagesLimit,
  firstMessagesOfConversations,
  firstMessagesOfPatients,
  getMessage,
  listConversationMessages,
  listMessages,
  listPatientMessages,
  messagesOfConversation,
  messagesOfPatient,
} from '../../services/chat/messages.ts';
import { Template } from '../../services/chat/template.resource.ts';
import { listTemplates } from '../../services/chat/templates.ts';
import { Direction } from '../../services/closed-sets.ts';
import { Patient } from '../../services/patients/patient.resource.ts';
import { CORE, type Resource, type Row, viewFor, viewOfSelection } from '../../services/resource.ts';
import { builder } from '../builder.ts';
import { ofItemNumbers, prefetchChildPages, prefetchedPage, registerChildFields } from '../child-pages.ts';
import { enumTypeOf } from '../enums.ts';
import { argsOn, type Face, withServiceArgs } from '../face-args.ts';
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

/**
 * The filters, defined once for both faces, each naming them its own way (src/schema/face-args.ts):
 * GraphQL in camelCase with its enums and booleans, REST (the Rest fields under /v1) in
 * snake_case with strings, which the services check and answer 422 for, naming the parameter.
 * A Public field hands the services REST's names (an enum arrives as its REST value), and its
 * refusals name the argument as the query did.
 */
const handledDescription = 'true: only conversations marked handled; false: only the others.';
const conversationArgs = (t: any, face: Face) =>
  argsOn(face, {
    phone: t.arg.string({ required: false, description: 'Separators ignored.' }),
    is_handled:
      face === 'Rest'
        ? t.arg.string({ required: false, description: 'true or false.' })
        : t.arg.boolean({ required: false, description: handledDescription }),
    updated_since: t.arg.string({
      required: false,
      description: 'ISO 8601. Ascending mutation order: any change moves a conversation to the end.',
    }),
  });

const messageArgs = (t: any, face: Face) =>
  argsOn(face, {
    direction:
      face === 'Rest'
        ? t.arg.string({ required: false, description: 'inbound or outbound.' })
        : t.arg({
            type: enumTypeOf(Direction),
            required: false,
            description: 'Only messages that went this way.',
          }),
    type:
      face === 'Rest'
        ? t.arg.string({
            required: false,
            description: 'text, image, document, audio, video, sticker or contacts.',
          })
        : t.arg({
            type: enumTypeOf(MessageTypes),
            required: false,
            description: 'Only messages of this type.',
          }),
    phone: t.arg.string({
      required: false,
      description: 'The patient side (to or from); separators ignored.',
    }),
    from: t.arg.string({
      required: false,
      description:
        'Only messages created at or after this time (inclusive): ISO 8601 with a zone, or a date.',
    }),
    to: t.arg.string({
      required: false,
      description: 'Only messages created before this time: ISO 8601 with a zone, or a date.',
    }),
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
    description:
      "The clinic's conversations, most recent activity first; with updatedSince, ascending mutation order.",
    args: conversationArgs(t, 'Public'),
    resolve: async (_root, args, ctx, info) => {
      const view = selection(Conversation, info);
      const page = await withServiceArgs(args, (a) =>
        listConversations(ctx, { ...a, ...relayPageArgs(a), view }),
      );
      await prefetchChildPages(ctx, info, page.items);
      return toConnection(page);
    },
  }),
  conversation: t.field({
    type: ConversationType,
    subGraphs: ['Public'],
    nullable: true,
    authScopes: chatRead,
    description: 'One conversation; null when the clinic has none with this id.',
    args: { id: t.arg.id({ required: true, description: 'The conversation (conv_<n>).' }) },
    resolve: (_root, args, ctx) =>
      notFoundIsNull(getConversation(ctx, String(args.id), viewFor(Conversation, CORE))),
  }),
  messages: connectionField(t, MessageType, {
    subGraphs: ['Public'],
    nullable: true,
    authScopes: chatRead,
    description:
      'Inbound and outbound across conversations, newest first; with updatedSince, ascending mutation order.',
    args: messageArgs(t, 'Public'),
    resolve: async (_root, args, ctx, info) => {
      const view = selection(Message, info);
      return toConnection(
        await withServiceArgs(args, (a) => listMessages(ctx, { ...a, ...relayPageArgs(a), view })),
      );
    },
  }),
  message: t.field({
    type: MessageType,
    subGraphs: ['Public'],
    nullable: true,
    authScopes: chatRead,
    description: 'One message; null when the clinic has none with this id.',
    args: { id: t.arg.id({ required: true, description: 'in_<n> or out_<n>.' }) },
    resolve: (_root, args, ctx) => notFoundIsNull(getMessage(ctx, String(args.id), viewFor(Message, CORE))),
  }),
  templates: t.field({
    type: [TemplateType],
    subGraphs: ['Public'],
    nullable: true,
    authScopes: allOf(Template.scopes),
    description: "The message templates of the clinic's messaging number.",
    args: { sendable: t.arg.boolean({ required: false, description: 'true: only sendable ones.' }) },
    resolve: (_root, args, ctx) => listTemplates(ctx, { ...args, view: viewFor(Template, CORE) }),
  }),
}));

builder.objectFields(MessageType, (t) => ({
  mediaLink: t.field({
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
    args: messageArgs(t, 'Public'),
    resolve: async (c: Row, args: any, ctx: RequestContext, info: GraphQLResolveInfo) => {
      const planned = prefetchedPage(c, info);
      if (planned) return toConnection(planned);
      const view = selection(Message, info);
      return toConnection(
        await withServiceArgs(args, (a) =>
          messagesOfConversation(ctx, c.id, { ...a, ...relayPageArgs(a), view }),
        ),
      );
    },
  }),
}));

builder.objectFields(PatientType, (t) => ({
  chatConversations: connectionField(t, ConversationType, {
    subGraphs: ['Public'],
    nullable: true,
    authScopes: patientChat,
    description: "The conversation of the patient's phone (none when the patient has no phone).",
    args: (({ phone: _, ...args }) => args)(conversationArgs(t, 'Public')),
    resolve: async (p: Row, args: any, ctx: RequestContext, info: GraphQLResolveInfo) => {
      const planned = prefetchedPage(p, info);
      if (planned) return toConnection(planned);
      const view = selection(Conversation, info);
      return toConnection(
        await withServiceArgs(args, (a) =>
          conversationsOfPatient(ctx, p.id, { ...a, ...relayPageArgs(a), view }),
        ),
      );
    },
  }),
  chatMessages: connectionField(t, MessageType, {
    subGraphs: ['Public'],
    nullable: true,
    authScopes: patientChat,
    description:
      "Messages of the patient's phone, newest first (the same filters as messages); empty when the patient has no phone.",
    args: messageArgs(t, 'Public'),
    resolve: async (p: Row, args: any, ctx: RequestContext, info: GraphQLResolveInfo) => {
      const planned = prefetchedPage(p, info);
      if (planned) return toConnection(planned);
      const view = selection(Message, info);
      return toConnection(
        await withServiceArgs(args, (a) => messagesOfPatient(ctx, p.id, { ...a, ...relayPageArgs(a), view })),
      );
    },
  }),
}));

/**
 * The nested chat lists a page plans for its items (src/schema/child-pages.ts): a page of
 * patients' conversations and messages (by their phones), a page of conversations' messages, at
 * whatever depth they are selected; the first page without filters only, as the fields' loaders.
 */
registerChildFields(PatientType, [
  {
    field: 'chatConversations',
    resource: Conversation,
    plan: (ctx, args) => {
      const limit = firstConversationsLimit(ctx, { ...args, ...relayPageArgs(args) });
      if (limit == null) return undefined;
      return ofItemNumbers('Patient', (ids, view) => firstConversationsOfPatients(ctx, ids, view, limit));
    },
  },
  {
    field: 'chatMessages',
    resource: Message,
    plan: (ctx, args) => {
      const limit = firstMessagesLimit(ctx, args);
      if (limit == null) return undefined;
      return ofItemNumbers('Patient', (ids, view) => firstMessagesOfPatients(ctx, ids, view, limit));
    },
  },
]);

registerChildFields(ConversationType, [
  {
    field: 'messages',
    resource: Message,
    plan: (ctx, args) => {
      const limit = firstMessagesLimit(ctx, args);
      if (limit == null) return undefined;
      return ofItemNumbers('Conversation', (ids, view) =>
        firstMessagesOfConversations(ctx, ids, view, limit),
      );
    },
  },
]);

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
  const restMessageArgs = { ...messageArgs(t, 'Rest'), ...page };
  const conversationView = viewFor(Conversation, CORE);
  const messageView = viewFor(Message, CORE);
  return {
    listConversations: t.field({
      type: ConversationPage,
      subGraphs: ['Rest'],
      description:
        "The clinic's conversations, most recent activity first; with updated_since, ascending mutation order (incremental sync).",
      authScopes: chatRead,
      args: { ...conversationArgs(t, 'Rest'), ...page },
      resolve: async (_root, args, ctx) =>
        toRestPage(await listConversations(ctx, { ...args, view: conversationView })),
    }),
    getConversation: t.field({
      type: ConversationBody,
      subGraphs: ['Rest'],
      description: 'One conversation, by its id; 404 when the clinic has none with it.',
      authScopes: chatRead,
      args: { id: t.arg.string({ required: true }) },
      resolve: async (_root, args, ctx) => ({ data: await getConversation(ctx, args.id, conversationView) }),
    }),
    listConversationMessages: t.field({
      type: MessagePage,
      subGraphs: ['Rest'],
      description:
        "A conversation's messages, inbound and outbound merged, newest first; with updated_since, ascending mutation order.",
      authScopes: chatRead,
      args: { id: t.arg.string({ required: true }), ...restMessageArgs },
      resolve: async (_root, args, ctx) =>
        toRestPage(await listConversationMessages(ctx, args.id, { ...args, view: messageView })),
    }),
    listMessages: t.field({
      type: MessagePage,
      subGraphs: ['Rest'],
      description:
        'Inbound and outbound messages across conversations, newest first; with updated_since, ascending mutation order.',
      authScopes: chatRead,
      args: restMessageArgs,
      resolve: async (_root, args, ctx) =>
        toRestPage(await listMessages(ctx, { ...args, view: messageView })),
    }),
    getMessage: t.field({
      type: MessageBody,
      subGraphs: ['Rest'],
      description: 'One message (in_<n> or out_<n>); 404 when the clinic has none with that id.',
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
      description: "The message templates of the clinic's messaging number, with whether each can be sent.",
      authScopes: allOf(Template.scopes),
      args: { sendable: t.arg.string({ required: false, description: 'true: only sendable ones.' }) },
      resolve: async (_root, args, ctx) => ({
        data: await listTemplates(ctx, { ...args, view: viewFor(Template, CORE) }),
      }),
    }),
    listPatientChatMessages: t.field({
      type: MessagePage,
      subGraphs: ['Rest'],
      description: "Messages of the patient's phone, newest first; empty when the patient has no phone.",
      authScopes: patientChat,
      args: { id: t.arg.string({ required: true, description: 'Patient id.' }), ...page },
      resolve: async (_root, args, ctx) =>
        toRestPage(await listPatientMessages(ctx, args.id, { ...args, view: messageView })),
    }),
  };
});
