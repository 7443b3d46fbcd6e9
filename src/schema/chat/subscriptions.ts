import { allOf } from '../../auth/scopes.ts';
import type { RequestContext } from '../../lib/request-context.ts';
import { Conversation } from '../../services/chat/conversation.resource.ts';
import { getConversation } from '../../services/chat/conversations.ts';
import { isMessageEvent, liveMapped } from '../../services/events/live.ts';
import { CORE, type Row, viewFor } from '../../services/resource.ts';
import { builder } from '../builder.ts';
import { ConversationType, MessageType } from './types.ts';

/**
 * What a live inbox needs (src/server/websocket.ts serves them): a conversation's messages as
 * they arrive and change status, and the conversation list's changes. Both follow the chat.*
 * events of the outbox, so they see exactly what webhooks deliver, in commit order.
 */
const chatRead = allOf(Conversation.scopes);
const conversationView = viewFor(Conversation, CORE);

const conversationOf = (data: unknown): string | null => {
  const id = (data as { conversation_id?: unknown } | null)?.conversation_id;
  return typeof id === 'string' ? id : null;
};

builder.subscriptionFields((t) => ({
  conversationMessages: t.field({
    type: MessageType,
    authScopes: chatRead,
    description:
      "A conversation's new messages (inbound and outbound) and each status change of its messages (sent, delivered, read, failed): the message as GET /v1/chat/messages/{id} presents it, taken from the event (failureReason is null on a failure, as failure_reason is in chat.message.failed).",
    args: {
      conversationId: t.arg.id({
        required: true,
        description:
          'The conversation (conv_<n>); an unknown one is a not_found error before anything is subscribed.',
      }),
    },
    subscribe: async (_root, args, ctx: RequestContext) => {
      const id = String(args.conversationId);
      // An unknown id, or another clinic's, is a 404 before anything is subscribed.
      await getConversation(ctx, id, conversationView);
      return liveMapped(
        ctx,
        ctx.services.events.hub,
        (e) => isMessageEvent(e) && conversationOf(e.data) === id,
        (e) => e.data as Row,
      );
    },
    resolve: (message) => message as any,
  }),
  conversationsChanged: t.field({
    type: ConversationType,
    authScopes: chatRead,
    description:
      'A conversation each time one of its messages arrives or changes status: the conversation as GET /v1/chat/conversations/{id} answers it then.',
    subscribe: (_root, _args, ctx: RequestContext) =>
      liveMapped(
        ctx,
        ctx.services.events.hub,
        (e) => isMessageEvent(e) && conversationOf(e.data) !== null,
        (e) => {
          // A subscription lives for hours: its loaders must not serve what they read an hour ago.
          ctx.loaders.clear();
          return getConversation(ctx, conversationOf(e.data) as string, conversationView);
        },
      ),
    resolve: (conversation) => conversation as any,
  }),
}));
