import { Clinic, Conversation } from '../../entities/index.ts';
import { AppError, notFound } from '../../lib/errors.ts';
import { tryParseId } from '../../lib/ids.ts';
import type { ServiceContext } from '../../lib/request-context.ts';
import { jsonObject } from '../json-body.ts';
import { CORE, type Row, viewFor } from '../resource.ts';
import { chatChange } from './changes.ts';
import { Conversation as ConversationResource } from './conversation.resource.ts';
import { getConversation } from './conversations.ts';

const view = viewFor(ConversationResource, CORE);

/**
 * POST /v1/chat/conversations/{id}/handled `{handled: boolean}` (spec, States: conversation
 * handled flag): 404 for an unknown conversation, then 422 unless `handled` is a JSON boolean and
 * the clinic has handled-marking on.
 */
export async function markHandled(ctx: ServiceContext, id: string, body: unknown): Promise<Row> {
  const n = tryParseId('Conversation', id);
  const found = n == null ? null : await ctx.em.findOne(Conversation, n);
  if (!found) throw notFound('conversation', id);
  const { handled } = jsonObject(body, ['handled']);
  if (typeof handled !== 'boolean')
    throw new AppError('validation_failed', 'handled must be a JSON boolean: true or false.', {
      param: 'handled',
    });
  const clinic = await ctx.em.findOneOrFail(Clinic, ctx.principal.clinicId);
  if (!clinic.handledMarkingEnabled)
    throw new AppError(
      'validation_failed',
      'This clinic has not enabled handled-marking (clinic setting handled-marking).',
      { param: 'handled' },
    );
  if (found.isHandled !== handled) {
    await chatChange(ctx.em, clinic.id, async (change) => {
      const c = (await change.em.findOne(Conversation, found.id, { filters: false })) as Conversation;
      c.isHandled = handled;
      change.touchConversation(c);
      await change.em.flush();
    });
  }
  return getConversation(ctx, id, view);
}
