import { allOf } from '../../auth/scopes.ts';
import { AppError } from '../../lib/errors.ts';
import type { RequestContext } from '../../lib/request-context.ts';
import { SandboxNetwork } from '../../network/sandbox.ts';
import { markConversationHandled } from '../../services/chat/handled.ts';
import { patientMessage, patientReaction } from '../../services/chat/patient-side.ts';
import { reactToMessage } from '../../services/chat/react.ts';
import { type Sent, sendMessage } from '../../services/chat/send.ts';
import { builder } from '../builder.ts';
import { namedPerFace } from '../resource-types.ts';
import { restOne } from '../shared.ts';
import { definePayloadMembers, restWrite, restWriteAnswer } from '../write-faces.ts';
import { ConversationType, MessageType } from './types.ts';

/**
 * The chat inbox's writes (spec, Chat: write; scope chat:write, which a key never has beside
 * chat:read): send, react, handled. All three are write definitions (`faces: 'own'`:
 * src/services/chat/{send,react,handled}.ts) whose faces here keep their flat GraphQL arguments and
 * Rest answer types, and run through `performWrite` like every write. REST reads the body as
 * JSON (src/server/app.ts), so a value of the wrong JSON type is a 422 instead of being coerced.
 */
const chatWrite = allOf(['chat:write']);

const CaptionMeta = builder.objectRef<{ id: string; delivery_mode: string }>('CaptionMeta').implement({
  description: 'The caption of a media message: a text message sent right after it.',
  fields: (t) =>
    namedPerFace({
      id: () => t.exposeString('id', { description: 'The caption message (out_<n>).' }),
      delivery_mode: (sg) =>
        t.exposeString('delivery_mode', { ...sg, description: 'free_text or template_fallback.' }),
    }),
});

const SendMeta = builder.objectRef<Sent['meta']>('SendMeta').implement({
  description: 'How a sent message goes out.',
  fields: (t) =>
    namedPerFace({
      delivery_mode: (sg) =>
        t.exposeString('delivery_mode', {
          ...sg,
          description:
            'free_text (inside the 24-hour window), template_fallback (window closed: wrapped in the marketing template) or template (a template by name, or media).',
        }),
      caption: () =>
        t.field({
          type: CaptionMeta,
          nullable: true,
          description: 'The caption sent right after a media message; null without one.',
          resolve: (m) => m.caption ?? null,
        }),
    }),
});

definePayloadMembers(sendMessage, (t) => ({
  meta: t.field({ type: SendMeta, description: 'How the message goes out.', resolve: (p: any) => p.meta }),
}));

const SendResult = builder.objectRef<Sent>('SendResult').implement({
  description: 'The message as recorded (status queued) and how it went out.',
  fields: (t) => ({
    data: t.field({ type: MessageType, resolve: (s) => s.data }),
    meta: t.field({ type: SendMeta, resolve: (s) => s.meta }),
  }),
});

const MessageBody = restOne('ReactionResult', MessageType);
const ConversationBody = restOne('HandledResult', ConversationType);

/** GraphQL arguments as a JSON body: arguments left out are absent, explicit nulls kept. */
const bodyOf = (args: Record<string, unknown>, omit: string[] = []) =>
  Object.fromEntries(Object.entries(args).filter(([k, v]) => v !== undefined && !omit.includes(k)));

/** What every write's GraphQL face takes beside its fields (src/schema/writes.ts). */
const WRITE_ARGS = ['id', 'idempotency_key', 'expected_updated_at'];

builder.mutationType({});

const idempotencyArg = (t: any) =>
  t.arg.string({
    required: false,
    description: 'The same key and input within 24 hours answer the first result and write nothing.',
  });
const expectedArg = (t: any) =>
  t.arg.string({
    required: false,
    description:
      "The object's updated_at as last read: when it has changed since, the write is refused (precondition_failed) and changes nothing.",
  });

const SandboxResult = builder.objectRef<{ id: string; conversation_id: string }>('SandboxResult').implement({
  subGraphs: ['Sandbox'],
  description: 'What the sandbox network reported, as the service recorded it.',
  fields: (t) => ({
    id: t.exposeString('id', { description: 'The message: in_<n> (or the message reacted to).' }),
    conversation_id: t.exposeString('conversation_id'),
  }),
});

/** The sandbox network of this app, or a 404 for a real network (these mutations do not exist there). */
function sandboxOf(ctx: RequestContext): SandboxNetwork {
  const network = ctx.services.chat.network;
  if (!(network instanceof SandboxNetwork))
    throw new AppError('not_found', 'The sandbox mutations exist only with the sandbox network.');
  return network;
}

const recordedIds = (r: unknown) => {
  const { id, conversation_id } = r as { id: string; conversation_id: string };
  return { id, conversation_id };
};

const SendMediaInput = builder.inputType('SendMediaInput', {
  fields: (t) => ({
    type: t.string({ required: true, description: 'image (JPEG or PNG) or document (PDF).' }),
    url: t.string({ required: true, description: 'https URL the service downloads now; up to 16 MB.' }),
    filename: t.string({ required: false, description: 'Documents only; .pdf appended when missing.' }),
    caption: t.string({
      required: false,
      description: 'Up to 1024 characters; sent as a text message right after.',
    }),
  }),
});

builder.mutationFields((t) => ({
  sandboxInbound: t.field({
    type: SandboxResult,
    subGraphs: ['Sandbox'],
    authScopes: chatWrite,
    description:
      "Sandbox only: the patient writes to the clinic (the network's signed callback, as a real one makes it). Opens the 24-hour window.",
    args: {
      from: t.arg.string({ required: true, description: "The patient's phone." }),
      text: t.arg.string({ required: false }),
      name: t.arg.string({ required: false, description: "The patient's profile name." }),
      media_url: t.arg.string({ required: false }),
      media_type: t.arg.string({ required: false, description: 'image, document, audio, video or sticker.' }),
      reply_to: t.arg.id({ required: false, description: 'The outbound message replied to (out_<n>).' }),
    },
    resolve: async (_root, args, ctx) => {
      const network = sandboxOf(ctx);
      const message = await patientMessage(ctx.em, ctx.principal.clinicId, {
        from: args.from,
        text: args.text,
        name: args.name,
        mediaUrl: args.media_url,
        mediaType: args.media_type,
        replyTo: args.reply_to == null ? null : String(args.reply_to),
      });
      return recordedIds(await network.inbound(message));
    },
  }),
  sandboxReact: t.field({
    type: SandboxResult,
    subGraphs: ['Sandbox'],
    authScopes: chatWrite,
    description: "Sandbox only: the patient reacts to a message; null withdraws the patient's reaction.",
    args: { message_id: t.arg.id({ required: true }), emoji: t.arg.string({ required: false }) },
    resolve: async (_root, args, ctx) => {
      const network = sandboxOf(ctx);
      const r = await patientReaction(ctx.em, ctx.principal.clinicId, {
        message: String(args.message_id),
        emoji: args.emoji ?? null,
      });
      return recordedIds(await network.patientReaction(r));
    },
  }),

  // ---------- Rest (served under /v1: src/rest/direct.ts) ----------
  restSendMessage: t.field({
    type: SendResult,
    subGraphs: ['Rest'],
    authScopes: chatWrite,
    resolve: async (_root, _args, ctx) => {
      // The REST body as the Rest type says it: meta.caption is null when there is none.
      const sent = (await restWriteAnswer(ctx, sendMessage, {})) as unknown as Sent;
      return { ...sent, meta: { ...sent.meta, caption: sent.meta.caption ?? null } };
    },
  }),
  restReactToMessage: t.field({
    type: MessageBody,
    subGraphs: ['Rest'],
    authScopes: chatWrite,
    args: { id: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => ({ data: await restWrite(ctx, reactToMessage, args) }),
  }),
  restMarkConversationHandled: t.field({
    type: ConversationBody,
    subGraphs: ['Rest'],
    authScopes: chatWrite,
    args: { id: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => ({ data: await restWrite(ctx, markConversationHandled, args) }),
  }),
}));
