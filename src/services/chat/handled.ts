import { Clinic, Conversation } from '../../entities/index.ts';
import { AppError } from '../../lib/errors.ts';
import { toId } from '../../lib/ids.ts';
import { CORE, viewFor } from '../resource.ts';
import { z } from '../write-input.ts';
import { defineWrite } from '../writes.ts';
import { chatChangeIn } from './changes.ts';
import { Conversation as ConversationResource } from './conversation.resource.ts';
import { getConversation } from './conversations.ts';

const view = viewFor(ConversationResource, CORE);

/**
 * POST /v1/chat/conversations/{id}/handled `{handled: boolean}` (spec, States: conversation
 * handled flag), on the one write mechanism: the body first (422 unless `handled` is a JSON
 * boolean), `Idempotency-Key`, then 404 for an unknown conversation, 412 for a stale If-Match,
 * 422 unless the clinic has handled-marking on. Its GraphQL mutation is every write's
 * (`markConversationHandled(input: {id, handled})`, src/schema/writes.ts), its Rest field in
 * src/schema/chat/mutations.ts. No event: the spec has none for it (docs/chat.md).
 */
export const markConversationHandled = defineWrite({
  name: 'markConversationHandled',
  method: 'POST',
  path: '/chat/conversations/:id/handled',
  ids: { id: 'Conversation' },
  status: 200,
  tag: 'Chat',
  summary: 'Mark a conversation handled or unhandled',
  scopes: ['chat:write'],
  faces: 'own',
  input: z.strictObject({
    handled: z.boolean().meta({ description: 'A JSON boolean; "true" as a string is a 422.' }),
  }),
  example: { handled: true },
  resource: ConversationResource,
  errors: {
    '422': {
      code: 'validation_failed',
      description:
        '`validation_failed`: `handled` is not a JSON boolean, or the clinic has not enabled handled-marking; `param` names the field.',
      message: 'This clinic has not enabled handled-marking (clinic setting handled-marking).',
      param: 'handled',
    },
  },
  present: (reader, id) => getConversation(reader, toId('Conversation', id), view),
  async run(w, { handled }, id) {
    // The clinic's chat lock before the conversation's row, the order every chat change takes
    // them in (changes.ts). A mark that changes nothing gives its number to no record.
    const change = await chatChangeIn(w);
    const conversation = await w.load(Conversation, 'Conversation', id);
    const clinic = await w.em.findOneOrFail(Clinic, w.clinicId, { fields: ['handledMarkingEnabled'] });
    if (!clinic.handledMarkingEnabled)
      throw new AppError(
        'validation_failed',
        'This clinic has not enabled handled-marking (clinic setting handled-marking).',
        { param: 'handled' },
      );
    if (conversation.isHandled !== handled) {
      conversation.isHandled = handled;
      change.touchConversation(conversation);
    }
    return conversation.id;
  },
});
