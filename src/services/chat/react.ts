import { Conversation, Message } from '../../entities/index.ts';
import { bounded } from '../../lib/bounded.ts';
import { AppError, notFound } from '../../lib/errors.ts';
import { parseMessageId } from '../../lib/ids.ts';
import type { RequestContext } from '../../lib/request-context.ts';
import { type MessagingNetwork, NetworkRefusal } from '../../network/adapter.ts';
import { CORE, viewFor } from '../resource.ts';
import { z } from '../write-input.ts';
import { checkVersion, defineWrite } from '../writes.ts';
import { chatChangeIn } from './changes.ts';
import { isSingleEmoji } from './emoji.ts';
import { Message as MessageResource } from './message.resource.ts';
import { presentMessage } from './messages.ts';
import { NETWORK_NOT_CONFIGURED_ERROR, networkOf } from './networks.ts';
import { windowOpen } from './window.ts';

/** A reaction may be set on a message at most this old (spec, Limits: reaction age). */
export const REACTION_MAX_AGE_MS = 30 * 24 * 3600_000;

const view = viewFor(MessageResource, CORE);

/** The advisory lock class of a message's clinic reactions (the second key is the message id). */
const REACTION_LOCK = 0x7265_6163; // 'reac'

/** How long a reaction waits for the network: within the request deadline (10 s by default). */
const REACTION_NETWORK_TIMEOUT_MS = 8_000;

interface Prepared {
  message: number;
  network: MessagingNetwork;
  from: string;
  to: string;
  networkMessageId: string;
  /** If-Match's version, checked again under the lock. */
  expected: number | '*' | undefined;
}

/**
 * POST /v1/chat/messages/{id}/reaction `{emoji}`: sets or replaces the clinic's reaction on a
 * message of either direction; null withdraws it. Needs the patient's 24-hour window open, the
 * message at most 30 days old and accepted by the network. On the one write mechanism: `prepare`
 * refuses early without a transaction; `run` takes the message's reaction lock, checks If-Match
 * again, calls the network (bounded) and records the emoji, in the write's transaction. No
 * event: the spec has none for it (docs/chat.md).
 */
export const reactToMessage = defineWrite<z.ZodObject<{ emoji: z.ZodType<string | null> }>, Prepared>({
  name: 'reactToMessage',
  method: 'POST',
  path: '/chat/messages/:id/reaction',
  ids: { id: 'Message' },
  status: 200,
  tag: 'Chat',
  summary: 'React to a message',
  scopes: ['chat:write'],
  faces: 'own',
  input: z.strictObject({
    emoji: z
      .string()
      .refine(isSingleEmoji, 'must be a single emoji, or null to withdraw the reaction')
      .nullable()
      .meta({ description: "One emoji: sets or replaces the clinic's reaction; null withdraws it." }),
  }),
  example: { emoji: '👍' },
  resource: MessageResource,
  errors: {
    '503': NETWORK_NOT_CONFIGURED_ERROR,
    '422': {
      code: 'validation_failed',
      description:
        '`validation_failed`: `emoji` is not a single emoji or null, the message is more than 30 days old, the patient has not written in the last 24 hours, or the network refused the reaction; `param` names the field.',
      message: 'The message is more than 30 days old; it can no longer be reacted to.',
      param: 'id',
    },
  },
  present: (reader, id) => presentMessage(reader, id, view),
  prepare: (ctx, _input, id, expected) => checkReaction(ctx, id, expected),
  async run(w, { emoji }, _id, prepared) {
    // One reaction of a message at a time, network call and write together, in every process: two
    // at once could reach the network in one order and be written in the other, the patient seeing
    // one emoji and the API another. The lock is the message's own (receipts and the clinic's other
    // chat writes do not wait for it), held by this write's transaction.
    await w.em
      .getConnection()
      .execute(
        'select pg_advisory_xact_lock(?, ?)',
        [REACTION_LOCK, prepared.message],
        'all',
        w.em.getTransactionContext(),
      );
    // If-Match once more, under the lock, before the network hears of it: a reaction that
    // committed meanwhile is a 412 here (a receipt during the network call moves only the status).
    const current = await w.em.findOneOrFail(Message, prepared.message, { refresh: true });
    checkVersion('Message', current.updatedAt, prepared.expected);
    await callNetwork(prepared, emoji);
    const change = await chatChangeIn(w);
    const m = await w.em.findOneOrFail(Message, prepared.message, { populate: ['conversation'] });
    m.reactionClinic = emoji;
    change.touch(m);
    return m.id;
  },
});

/** The refusals that need no lock: 404, 412, the age, the window, a message not yet sent. */
async function checkReaction(
  ctx: RequestContext,
  id: string | undefined,
  expected: number | '*' | undefined,
): Promise<Prepared> {
  // As a send: a live clinic without a network is a 503 before anything else is checked.
  const network = networkOf(ctx.services.chat.networks, ctx.principal.clinicMode);
  const parsed = parseMessageId(id ?? '');
  const message = parsed
    ? await ctx.em.findOne(Message, { id: parsed.n, direction: parsed.direction })
    : null;
  if (!message) throw notFound('message', String(id));
  checkVersion('Message', message.updatedAt, expected);
  const now = ctx.clock.now();
  if (now.getTime() - new Date(message.createdAt).getTime() > REACTION_MAX_AGE_MS)
    throw new AppError(
      'validation_failed',
      'The message is more than 30 days old; it can no longer be reacted to.',
      {
        param: 'id',
      },
    );
  const conversation = await ctx.em.findOneOrFail(
    Conversation,
    (message.conversation as unknown as { id: number }).id,
  );
  if (!windowOpen(conversation.lastInboundAt, now))
    throw new AppError(
      'validation_failed',
      'The patient has not written in the last 24 hours; reactions need the window open.',
      { param: 'id' },
    );
  if (!message.networkMessageId)
    throw new AppError(
      'validation_failed',
      'The network has not accepted this message yet; react once it is sent.',
      {
        param: 'id',
      },
    );
  return {
    message: message.id,
    network,
    from: conversation.clinicPhone ?? '',
    to: conversation.patientPhone,
    networkMessageId: message.networkMessageId,
    expected,
  };
}

/** The network's call, bounded (the transaction holds a connection and the lock while it waits). */
async function callNetwork(p: Prepared, emoji: string | null): Promise<void> {
  await bounded(
    () => p.network.react({ from: p.from, to: p.to, networkMessageId: p.networkMessageId, emoji }),
    REACTION_NETWORK_TIMEOUT_MS,
    () =>
      new AppError(
        'service_unavailable',
        `The messaging network did not answer within ${REACTION_NETWORK_TIMEOUT_MS / 1000} s; the reaction was not recorded. Try again.`,
      ),
  ).catch((e) => {
    if (e instanceof AppError) throw e;
    // The network's own answer, as an error of the API: a refusal is for good, anything else
    // may pass (the reaction is not recorded either way).
    throw e instanceof NetworkRefusal
      ? new AppError('validation_failed', `The messaging network refused the reaction: ${e.message}`, {
          param: 'emoji',
        })
      : new AppError(
          'service_unavailable',
          'The messaging network could not take the reaction now; the reaction was not recorded. Try again.',
        );
  });
}
