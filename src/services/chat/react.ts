import { Conversation, Message } from '../../entities/index.ts';
import { bounded } from '../../lib/bounded.ts';
import { AppError, notFound } from '../../lib/errors.ts';
import { parseMessageId } from '../../lib/ids.ts';
import type { ServiceContext } from '../../lib/request-context.ts';
import { NetworkRefusal } from '../../network/adapter.ts';
import { jsonObject } from '../json-body.ts';
import { CORE, type Row, viewFor } from '../resource.ts';
import { chatChange } from './changes.ts';
import type { ChatDeps } from './deps.ts';
import { isSingleEmoji } from './emoji.ts';
import { Message as MessageResource } from './message.resource.ts';
import { getMessage } from './messages.ts';
import { windowOpen } from './window.ts';

/** A reaction may be set on a message at most this old (spec, Limits: reaction age). */
export const REACTION_MAX_AGE_MS = 30 * 24 * 3600_000;

const view = viewFor(MessageResource, CORE);

/** The advisory lock class of a message's clinic reactions (the second key is the message id). */
const REACTION_LOCK = 0x7265_6163; // 'reac'

/** How long a reaction waits for the network: within the request deadline (10 s by default). */
const REACTION_NETWORK_TIMEOUT_MS = 8_000;

/**
 * POST /v1/chat/messages/{id}/reaction `{emoji}`: sets or replaces the clinic's reaction on a
 * message of either direction; null withdraws it. Needs the patient's 24-hour window open and the
 * message at most 30 days old.
 */
export async function reactToMessage(
  ctx: ServiceContext,
  deps: ChatDeps,
  id: string,
  body: unknown,
): Promise<Row> {
  const parsed = parseMessageId(id);
  // An unknown id is a 404 whatever the body (as for handled).
  const message = parsed
    ? await ctx.em.findOne(Message, { id: parsed.n, direction: parsed.direction })
    : null;
  if (!message) throw notFound('message', id);
  const fields = jsonObject(body, ['emoji']);
  if (!('emoji' in fields))
    throw new AppError(
      'validation_failed',
      'emoji is required: one emoji, or null to withdraw the reaction.',
      {
        param: 'emoji',
      },
    );
  const emoji = fields.emoji;
  if (emoji !== null && (typeof emoji !== 'string' || !isSingleEmoji(emoji)))
    throw new AppError(
      'validation_failed',
      'emoji must be a single emoji, or null to withdraw the reaction.',
      {
        param: 'emoji',
      },
    );

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
  const networkMessageId = message.networkMessageId;
  // One reaction of a message at a time, network call and write together, in every process: two
  // at once could reach the network in one order and be written in the other, the patient seeing
  // one emoji and the API another. The lock is the message's own (receipts and the clinic's other
  // chat writes do not wait for it), held by a transaction the write then joins.
  await ctx.em.transactional(async (em) => {
    await em
      .getConnection()
      .execute(
        'select pg_advisory_xact_lock(?, ?)',
        [REACTION_LOCK, message.id],
        'all',
        em.getTransactionContext(),
      );
    // Bounded: the transaction holds a connection (and the message's lock) while it waits.
    await bounded(
      () =>
        deps.network.react({
          from: conversation.clinicPhone ?? '',
          to: conversation.patientPhone,
          networkMessageId,
          emoji: emoji as string | null,
        }),
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
    await chatChange(em, ctx.principal.clinicId, async (change) => {
      const m = (await change.em.findOne(Message, message.id, {
        filters: false,
        populate: ['conversation'],
      })) as Message;
      m.reactionClinic = emoji as string | null;
      change.touch(m);
      await change.em.flush();
    });
  });
  return getMessage(ctx, id, view);
}
