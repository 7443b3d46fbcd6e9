import { Clinic, Conversation, Message, Template } from '../../entities/index.ts';
import { AppError } from '../../lib/errors.ts';
import { messageId } from '../../lib/ids.ts';
import type { RequestContext, ServiceContext } from '../../lib/request-context.ts';
import { checkIdempotencyKey, idempotent, requestHash } from '../idempotency.ts';
import { CORE, type Row, viewFor } from '../resource.ts';
import { chatChange, clinicRef, noteMessage } from './changes.ts';
import type { ChatDeps } from './deps.ts';
import { Message as MessageResource } from './message.resource.ts';
import { getMessage } from './messages.ts';
import { conversationOf } from './network-events.ts';
import { parseSendInput } from './send-input.ts';
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
 */
export type DeliveryMode = 'free_text' | 'template_fallback' | 'template';

export interface Sent {
  data: Row;
  meta: { delivery_mode: DeliveryMode; caption?: { id: string; delivery_mode: DeliveryMode } | null };
}

const view = viewFor(MessageResource, CORE);

/**
 * A send with its Idempotency-Key (if any; docs/chat.md): a retry with the same key and body
 * answers the first response (and says so in `Idempotent-Replayed`), never a second send.
 */
export async function sendIdempotently(
  ctx: ServiceContext & Pick<RequestContext, 'setHeader'>,
  deps: ChatDeps,
  body: unknown,
  key: unknown,
): Promise<Sent> {
  const stored = await idempotent(
    ctx.em,
    {
      keyId: ctx.principal.keyId,
      clinicId: ctx.principal.clinicId,
      key: checkIdempotencyKey(key),
      hash: requestHash(body),
      now: ctx.clock.now(),
      leaseMs: deps.idempotencyLeaseMs,
    },
    async () => ({ status: 202, body: await sendMessage(ctx, deps, body) }),
  );
  if (stored.replayed) ctx.setHeader('idempotent-replayed', 'true');
  return stored.body;
}

export async function sendMessage(ctx: ServiceContext, deps: ChatDeps, body: unknown): Promise<Sent> {
  const input = parseSendInput(body, ctx.principal.country);
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
    const rendered = render(t.body, input.params);
    const data = await recordQueued(ctx, input.to, from, {
      type: 'text',
      text: rendered,
      template: t.name,
      params: input.params,
    });
    return { data, meta: { delivery_mode: 'template' } };
  }

  if (input.kind === 'text') {
    const sent = await sendText(ctx, input.to, from, input.text, byRole('fallback'));
    return { data: sent.data, meta: { delivery_mode: sent.mode } };
  }

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
  if (!deps.media)
    throw new AppError('validation_failed', 'Sending media is not available.', { param: 'media' });
  const media = deps.media;
  // A caption that could not go out must refuse the send before the media goes: never a 422
  // for a request whose image the patient already has.
  if (input.media.caption !== null && !byRole('fallback')) {
    const conversation = await ctx.em.findOne(
      Conversation,
      { clinic: clinic.id, patientPhone: input.to },
      { filters: false },
    );
    if (!windowOpen(conversation?.lastInboundAt, ctx.clock.now())) throw noFallback('media.caption');
  }
  const kept = await media.keep(clinic.id, input.media);
  const data = await recordQueued(ctx, input.to, from, {
    type: input.media.type,
    text: null,
    template: template.name,
    params: [],
    media: kept,
  });
  if (input.media.caption === null) return { data, meta: { delivery_mode: 'template' } };
  const caption = await sendText(
    ctx,
    input.to,
    from,
    input.media.caption,
    byRole('fallback'),
    'media.caption',
  );
  return {
    data,
    meta: {
      delivery_mode: 'template',
      caption: { id: caption.data.id as string, delivery_mode: caption.mode },
    },
  };
}

/** Free text, or the fallback template when the window is closed. */
async function sendText(
  ctx: ServiceContext,
  to: string,
  from: string,
  text: string,
  fallback: Template | undefined,
  param = 'text',
): Promise<{ data: Row; mode: DeliveryMode }> {
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
  const data = await recordQueued(ctx, to, from, decide);
  return { data, mode: open ? 'free_text' : 'template_fallback' };
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
 * Records the outbound message as queued, and its send job in the same transaction: a process
 * that dies after the commit leaves the job to any worker. Answers the message as the
 * transaction sees it, so the response is the queued message (spec: 202 with status queued)
 * however fast a worker and the receipts are after the commit.
 */
async function recordQueued(
  ctx: ServiceContext,
  to: string,
  from: string,
  what: Recorded | ((conversation: Conversation, now: Date) => Recorded),
): Promise<Row> {
  return chatChange(ctx.em, ctx.principal.clinicId, async (change) => {
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
    const reader = { em: change.em, principal: ctx.principal, clock: { now: () => change.now } };
    return getMessage(reader, messageId('outbound', message.id), view);
  });
}

/** A template's body with {{n}} filled from params (the text the patient reads). */
function render(body: string | null | undefined, params: string[]): string | null {
  if (!body) return null;
  return body.replace(/\{\{(\d+)\}\}/g, (whole, n) => params[Number(n) - 1] ?? whole);
}
