import { Conversation } from '../../services/chat/conversation.resource.ts';
import { getConversation } from '../../services/chat/conversations.ts';
import { Message } from '../../services/chat/message.resource.ts';
import { getMessage } from '../../services/chat/messages.ts';
import { Template } from '../../services/chat/template.resource.ts';
import { CORE, viewFor } from '../../services/resource.ts';
import { nodeType, objectType } from '../resource-types.ts';

export const ConversationType = nodeType(Conversation, (id, ctx) =>
  getConversation(ctx, id, viewFor(Conversation, CORE)),
);
export const MessageType = nodeType(Message, (id, ctx) => getMessage(ctx, id, viewFor(Message, CORE)));
export const TemplateType = objectType(Template);
