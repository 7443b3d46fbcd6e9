import { allOf } from '../../auth/scopes.ts';
import { AppError } from '../../lib/errors.ts';
import type { RequestContext } from '../../lib/request-context.ts';
import { SandboxNetwork } from '../../network/sandbox.ts';
import { markConversationHandled } from '../../services/chat/handled.ts';
import {
  DeliveryMode,
  InboundMediaType,
  Message as MessageResource,
} from '../../services/chat/message.resource.ts';
import { getMessage } from '../../services/chat/messages.ts';
import { patientMessage, patientReaction } from '../../services/chat/patient-side.ts';
import { reactToMessage } from '../../services/chat/react.ts';
import { type Sent, sendMessage } from '../../services/chat/send.ts';
import { requireTestClinic } from '../../services/clinics/test-mode.ts';
import { CORE, viewFor } from '../../services/resource.ts';
import { builder } from '../builder.ts';
import { enumTypeOf } from '../enums.ts';
import { renamedError } from '../input-errors.ts';
import { namedPerFace } from '../resource-types.ts';
import { restOne } from '../shared.ts';
import { definePayloadMembers, restWrite, restWriteAnswer } from '../write-faces.ts';
import { ConversationType, MessageType } from './types.ts';

/**
 * The chat inbox's writes (spec, Chat: write; scope chat:write, which a key never has beside
 * chat:read): send, react, handled. All three are write definitions (`faces: 'own'`:
 * src/services/chat/{send,react,handled}.ts): their GraphQL mutations are made with every other
 * write's (src/schema/writes.ts: `sendMessage(input: SendMessageInput!)`, the send's payload with
 * `meta` beside `message`, below); their Rest fields and answer types are here. All run through
 * `performWrite`. REST reads the body as JSON (src/server/app.ts), so a value of the wrong JSON
 * type is a 422 instead of being coerced.
 */
const chatWrite = allOf(['chat:write']);
const DeliveryModeType = enumTypeOf(DeliveryMode);

const CaptionMeta = builder.objectRef<{ id: string; delivery_mode: string }>('CaptionMeta').implement({
  description: 'The caption of a media message: a text message sent right after it.',
  fields: (t) =>
    namedPerFace({
      id: () => t.exposeString('id', { description: 'The caption message (out_<n>).' }),
      delivery_mode: (sg) =>
        t.expose('delivery_mode', {
          ...sg,
          type: DeliveryModeType,
          description: 'free_text or template_fallback.',
        }),
    }),
});

const SendMeta = builder.objectRef<Sent['meta']>('SendMeta').implement({
  description: 'How a sent message goes out.',
  fields: (t) =>
    namedPerFace({
      delivery_mode: (sg) =>
        t.expose('delivery_mode', {
          ...sg,
          type: DeliveryModeType,
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

builder.mutationType({
  description:
    'Every write: `name(input: NameInput!): NamePayload!`, the payload holding the written object under its own name (`createPatient { patient { id } }`). A refusal is in `errors`, its `extensions.code` as REST names it and `extensions.param` the input field it is about.',
});

// ---------- Sandbox (test clinics only: docs/test-mode.md) ----------

/** The sandbox network, for a test clinic's key; a 403 `test_mode_only` for a live clinic's. */
function sandboxOf(ctx: RequestContext, mutation: string): SandboxNetwork {
  requireTestClinic(ctx.principal.clinicMode, mutation);
  const network = ctx.services.chat.networks.test;
  if (!(network instanceof SandboxNetwork))
    throw new AppError(
      'not_found',
      'The sandbox mutations need the sandbox network, which this service does not run.',
    );
  return network;
}

/**
 * The patient side (src/services/chat/patient-side.ts) names what the CLI's options are called
 * (`media-type`, `reply-to`, the `message` reacted to); a mutation's caller wrote the input's
 * fields (`input.mediaType`), as every other mutation's refusal names them (src/schema/input-errors.ts).
 */
const inputNames: Record<string, string> = {
  from: 'from',
  text: 'text',
  name: 'name',
  'media-url': 'mediaUrl',
  'media-type': 'mediaType',
  'reply-to': 'replyTo',
  message: 'messageId',
  emoji: 'emoji',
};

async function asSandboxInput<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw renamedError(
      err,
      (param) => (param in inputNames ? `input.${inputNames[param]}` : undefined),
      (message) =>
        message.replace(/\b(media-url|media-type|reply-to)\b/g, (cli) => `input.${inputNames[cli]}`),
    );
  }
}

/** The message the callback recorded (or reacted to), as a read of it answers now. */
async function recordedMessage(ctx: RequestContext, reply: unknown) {
  const id = (reply as { id?: unknown } | null)?.id;
  if (typeof id !== 'string')
    throw new Error(`The sandbox's callback recorded no message: ${JSON.stringify(reply)}`);
  return { message: await getMessage(ctx, id, viewFor(MessageResource, CORE)) };
}

const sandboxPayload = (name: string, what: string) =>
  builder.objectRef<{ message: any }>(name).implement({
    subGraphs: ['Sandbox'],
    description: `What ${name.replace(/Payload$/, '').replace(/^./, (c) => c.toLowerCase())} answers.`,
    fields: (t) => ({
      message: t.field({ type: MessageType, description: what, resolve: (p) => p.message }),
    }),
  });

const SandboxInboundInput = builder.inputType('SandboxInboundInput', {
  subGraphs: ['Sandbox'],
  description: 'What the patient sends: text, media, or both.',
  fields: (t) => ({
    from: t.string({ required: true, description: "The patient's phone; separators ignored." }),
    text: t.string({ required: false, description: 'The text (or the caption of the media).' }),
    name: t.string({ required: false, description: "The patient's profile name on the messaging network." }),
    mediaUrl: t.string({
      required: false,
      description: 'A link to the media the patient sends; goes with mediaType.',
    }),
    mediaType: t.field({
      type: enumTypeOf(InboundMediaType),
      required: false,
      description: 'The kind of the media; goes with mediaUrl.',
    }),
    replyTo: t.id({ required: false, description: 'The outbound message replied to (out_<n>).' }),
  }),
});

const SandboxReactInput = builder.inputType('SandboxReactInput', {
  subGraphs: ['Sandbox'],
  description: "The patient's reaction.",
  fields: (t) => ({
    messageId: t.id({ required: true, description: 'The message reacted to (in_<n> or out_<n>).' }),
    emoji: t.string({
      required: false,
      description: "One emoji: sets or replaces the patient's reaction; null withdraws it.",
    }),
  }),
});

const SandboxInboundPayload = sandboxPayload(
  'SandboxInboundPayload',
  "The patient's message, as the service recorded it.",
);
const SandboxReactPayload = sandboxPayload(
  'SandboxReactPayload',
  "The message reacted to, with the patient's reaction as the service recorded it.",
);

builder.mutationFields((t) => ({
  sandboxInbound: t.field({
    type: SandboxInboundPayload,
    subGraphs: ['Sandbox'],
    authScopes: chatWrite,
    description:
      "Test clinics only (a live clinic's key gets `test_mode_only`): the patient writes to the clinic (the network's signed callback, as a real one makes it). Opens the 24-hour window.",
    args: {
      input: t.arg({
        type: SandboxInboundInput,
        required: true,
        description: 'The input of sandboxInbound.',
      }),
    },
    resolve: (_root, { input }, ctx) =>
      asSandboxInput(async () => {
        const network = sandboxOf(ctx, 'sandboxInbound');
        const message = await patientMessage(ctx.em, ctx.principal.clinicId, {
          from: input.from,
          text: input.text,
          name: input.name,
          mediaUrl: input.mediaUrl,
          mediaType: input.mediaType,
          replyTo: input.replyTo == null ? null : String(input.replyTo),
        });
        return recordedMessage(ctx, await network.inbound(message));
      }),
  }),
  sandboxReact: t.field({
    type: SandboxReactPayload,
    subGraphs: ['Sandbox'],
    authScopes: chatWrite,
    description:
      "Test clinics only (a live clinic's key gets `test_mode_only`): the patient reacts to a message; null withdraws the patient's reaction.",
    args: {
      input: t.arg({ type: SandboxReactInput, required: true, description: 'The input of sandboxReact.' }),
    },
    resolve: (_root, { input }, ctx) =>
      asSandboxInput(async () => {
        const network = sandboxOf(ctx, 'sandboxReact');
        const r = await patientReaction(ctx.em, ctx.principal.clinicId, {
          message: String(input.messageId),
          emoji: input.emoji ?? null,
        });
        return recordedMessage(ctx, await network.patientReaction(r));
      }),
  }),

  // ---------- Rest (served under /v1: src/rest/direct.ts) ----------
  restSendMessage: t.field({
    type: SendResult,
    subGraphs: ['Rest'],
    description:
      "Sends text, a template or media (with an optional caption) to a patient phone through the clinic's messaging number. Free text inside the 24-hour window goes out as it is; outside it, wrapped in the clinic's marketing template. The message is recorded queued; its receipts follow as chat.message.* events.",
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
    description: "Sets, replaces or (with null) withdraws the clinic's emoji reaction to a message.",
    authScopes: chatWrite,
    args: { id: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => ({ data: await restWrite(ctx, reactToMessage, args) }),
  }),
  restMarkConversationHandled: t.field({
    type: ConversationBody,
    subGraphs: ['Rest'],
    description: "Marks a conversation handled or not handled (the inbox's to-do state).",
    authScopes: chatWrite,
    args: { id: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => ({ data: await restWrite(ctx, markConversationHandled, args) }),
  }),
}));
