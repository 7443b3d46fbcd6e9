import { Clinic, Conversation, Message, Template } from '../../entities/index.ts';
import { AppError } from '../../lib/errors.ts';
import { messageId } from '../../lib/ids.ts';
import type { RequestContext } from '../../lib/request-context.ts';
import { CORE, type Row, viewFor } from '../resource.ts';
import type { z } from '../write-input.ts';
import { defineWrite, type WriteContext } from '../writes.ts';
import { type ChatChange, chatChangeIn, clinicRef, noteMessage } from './changes.ts';
import { type DeliveryMode as DeliveryModes, Message as MessageResource } from './message.resource.ts';
import { presentMessage } from './messages.ts';
import { conversationOf } from './network-events.ts';
import { networkOf } from './networks.ts';
import { parseSendInput, type SendInput, sendBody } from './send-input.ts';
import { enqueueSend } from './send-jobs.ts';
import { notSendableReason } from './template.resource.ts';
import { windowOpen } from './window.ts';

/**
 * POST /v1/chat/messages (spec, Chat: write). The message is recorded as queued with its send
 * job, in one transaction; a worker hands it to the network (send-worker.ts) and receipts move
 * it on through the callback. The request never waits for the network. Free text inside the 24-hour window
 * goes out as it is, outside it wrapped in the clinic's marketing template (template_fallback);
 * a template by name must be sendable and get exactly its parameter count; media goes out as
 * the clinic's image or document template, its caption as a text message right after.
 *
 * On the one write mechanism (`defineWrite`): Idempotency-Key, If-Match (refused: a send
 * creates), the ETag and the error mapping are `performWrite`'s. The body keeps its own check
 * (`parse`: the messages its clients rely on) and the answer its `meta` (`members`). `prepare`
 * checks the clinic, the template and the media and keeps the media, without a transaction;
 * `run` judges the window and records the message(s) and their send jobs in the write's one
 * transaction, so a caption refused leaves no media message either.
 */
/** One of the DeliveryMode set (message.resource.ts). */
export type DeliveryMode = (typeof DeliveryModes.values)[number];

export interface Sent {
  data: Row;
  meta: { delivery_mode: DeliveryMode; caption?: { id: string; delivery_mode: DeliveryMode } | null };
}

const view = viewFor(MessageResource, CORE);

/** What `prepare` settled: the message(s) to record, the window still to be judged under the lock. */
interface Prepared {
  to: string;
  from: string;
  first: Recorded | { text: string; fallback: Template | undefined; param: string };
  mode?: DeliveryMode;
  caption?: { text: string; fallback: Template | undefined };
}

export const sendMessage = defineWrite<typeof sendBody, Prepared>({
  name: 'sendMessage',
  method: 'POST',
  path: '/chat/messages',
  status: 202,
  tag: 'Chat',
  summary: 'Send a message',
  scopes: ['chat:write'],
  faces: 'own',
  // Describes the body (GraphQL's SendMessageInput); `parse` checks it. Its OpenAPI body is written
  // beside the others (src/rest/request-bodies.ts), from the same texts.
  input: sendBody,
  parse: (body, ctx) => parseSendInput(body, ctx.principal.country) as unknown as z.output<typeof sendBody>,
  members: true,
  example: { to: '050-123-4567', text: 'Your appointment is confirmed for Monday at 10:00.' },
  resource: MessageResource,
  present: (reader, id) => presentMessage(reader, id, view),
  prepare: (ctx, input) => prepareSend(ctx, input as unknown as SendInput),
  async run(w, _input, _id, p) {
    const first =
      'type' in p.first
        ? { id: await recordQueued(w, p.to, p.from, p.first), mode: p.mode as DeliveryMode }
        : await sendText(w, p.to, p.from, p.first.text, p.first.fallback, p.first.param);
    const caption = p.caption
      ? await sendText(w, p.to, p.from, p.caption.text, p.caption.fallback, 'media.caption')
      : undefined;
    const meta: Sent['meta'] = {
      delivery_mode: first.mode,
      ...(caption ? { caption: { id: messageId('outbound', caption.id), delivery_mode: caption.mode } } : {}),
    };
    return { id: first.id, members: { meta } };
  },
});

async function prepareSend(ctx: RequestContext, input: SendInput): Promise<Prepared> {
  // The key's clinic must have a network to send through before anything is checked or fetched.
  networkOf(ctx.services.chat.networks, ctx.principal.clinicMode);
  const clinic = await ctx.em.findOneOrFail(Clinic, ctx.principal.clinicId);
  if (!clinic.phone)
    throw new AppError('validation_failed', 'This clinic has no messaging number to send from.', {
      param: 'to',
    });
  const from = clinic.phone;
  const templates = await ctx.em.find(Template, { clinic: clinic.id }, { filters: false });
  const byRole = (role: string) => templates.find((t) => t.role === role && notSendableReason(t) === null);

  if (input.kind === 'template') {
    const t = templates.find((x) => x.name === input.template);
    if (!t)
      throw new AppError(
        'validation_failed',
        `Unknown template '${input.template}'. GET /v1/chat/templates lists the clinic's templates.`,
        { param: 'template' },
      );
    const reason = notSendableReason(t);
    if (reason)
      throw new AppError('validation_failed', `Template '${t.name}' cannot be sent: ${reason}`, {
        param: 'template',
      });
    const count = t.parameterCount ?? 0;
    if (input.params.length !== count)
      throw new AppError(
        'validation_failed',
        `Template '${t.name}' takes ${count} parameter(s); params has ${input.params.length}.`,
        { param: 'params' },
      );
    const first: Recorded = {
      type: 'text',
      text: render(t.body, input.params),
      template: t.name,
      params: input.params,
    };
    return { to: input.to, from, first, mode: 'template' };
  }

  if (input.kind === 'text')
    return { to: input.to, from, first: { text: input.text, fallback: byRole('fallback'), param: 'text' } };

  // Media: downloaded and checked before anything is recorded or sent.
  const template = byRole(input.media.type);
  if (!template)
    throw new AppError(
      'validation_failed',
      `This clinic has no approved ${input.media.type} template to send media with.`,
      {
        param: 'media.type',
      },
    );
  const media = ctx.services.chat.media;
  if (!media) throw new AppError('validation_failed', 'Sending media is not available.', { param: 'media' });
  // A caption that cannot go out refuses the send before the media is downloaded (the write's
  // transaction judges the window again: a refusal there records neither message).
  if (input.media.caption !== null && !byRole('fallback')) {
    const conversation = await ctx.em.findOne(
      Conversation,
      { clinic: clinic.id, patientPhone: input.to },
      { filters: false },
    );
    if (!windowOpen(conversation?.lastInboundAt, ctx.clock.now())) throw noFallback('media.caption');
  }
  const kept = await media.keep(clinic.id, ctx.principal.clinicMode, input.media);
  const first: Recorded = {
    type: input.media.type,
    text: null,
    template: template.name,
    params: [],
    media: kept,
  };
  return {
    to: input.to,
    from,
    first,
    mode: 'template',
    ...(input.media.caption === null
      ? {}
      : { caption: { text: input.media.caption, fallback: byRole('fallback') } }),
  };
}

/** Free text, or the fallback template when the window is closed. */
async function sendText(
  w: WriteContext,
  to: string,
  from: string,
  text: string,
  fallback: Template | undefined,
  param: string,
): Promise<{ id: number; mode: DeliveryMode }> {
  // The window is judged in the change that records the message, so a patient's message being
  // recorded at the same moment is either before it (window open) or after it, never half-seen.
  let open = false;
  const decide = (conversation: Conversation, now: Date): Recorded => {
    open = windowOpen(conversation.lastInboundAt, now);
    if (!open && !fallback) throw noFallback(param);
    return {
      type: 'text',
      text,
      template: open ? null : (fallback as Template).name,
      params: open ? null : [text],
    };
  };
  const id = await recordQueued(w, to, from, decide);
  return { id, mode: open ? 'free_text' : 'template_fallback' };
}

const noFallback = (param: string) =>
  new AppError(
    'validation_failed',
    "The patient's 24-hour window is closed and the clinic has no approved marketing template to send free text in.",
    { param },
  );

interface Recorded {
  type: 'text' | 'image' | 'document';
  text: string | null;
  template: string | null;
  params: string[] | null;
  media?: { key: string; mime: string; filename: string | null };
}

/**
 * Records the outbound message as queued, a chat change of its own number, and its send job in
 * the write's transaction: a process that dies after the commit leaves the job to any worker.
 * The write answers the message as the transaction sees it (`present`), so the response is the
 * queued message (spec: 202 with status queued) however fast a worker and the receipts are.
 */
async function recordQueued(
  w: WriteContext,
  to: string,
  from: string,
  what: Recorded | ((conversation: Conversation, now: Date) => Recorded),
): Promise<number> {
  const change: ChatChange = await chatChangeIn(w);
  const conversation = await conversationOf(change, to, from);
  const m = typeof what === 'function' ? what(conversation, change.now) : what;
  const message = change.em.create(Message, {
    clinic: clinicRef(change),
    conversation,
    direction: 'outbound',
    type: m.type,
    fromPhone: from,
    toPhone: to,
    patientPhone: to,
    text: m.text,
    mediaType: m.media ? m.type : null,
    mediaMime: m.media?.mime ?? null,
    mediaPath: m.media?.key ?? null,
    mediaFilename: m.media?.filename ?? null,
    templateName: m.template,
    templateParams: m.params,
    seq: change.seq,
    createdAt: change.now,
    updatedAt: change.now,
  });
  noteMessage(conversation, message);
  change.touch(message);
  await change.em.flush();
  await enqueueSend(change.em, {
    message: message.id,
    clinic: change.clinicId,
    conversation: conversation.id,
  });
  return message.id;
}

/** A template's body with {{n}} filled from params (the text the patient reads). */
function render(body: string | null | undefined, params: string[]): string | null {
  if (!body) return null;
  return body.replace(/\{\{(\d+)\}\}/g, (whole, n) => params[Number(n) - 1] ?? whole);
}
