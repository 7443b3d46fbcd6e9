import type { Message } from '../../entities/index.ts';
import type { EventType } from '../../events/types.ts';
import { messageId } from '../../lib/ids.ts';
import { CORE, viewFor } from '../resource.ts';
import type { PendingEvent } from '../unit-of-work.ts';
import { Message as MessageResource } from './message.resource.ts';
import { getMessage } from './messages.ts';

/** The chat events of the spec (Events, Event types): one per message change the spec names. */
export type ChatEventType = Extract<EventType, `chat.${string}`>;

const view = viewFor(MessageResource, CORE);

/**
 * An event about `message`: its data the whole message with its current status, as
 * `GET /v1/chat/messages/{id}` answers it after the write commits
 * (spec: "upsert on message id"). chat.message.failed carries `failure_reason` null, as the
 * spec says: a reader re-reads the message by id for the reason.
 */
export function messageEvent(type: ChatEventType, message: Message): PendingEvent {
  return {
    type,
    scope: 'chat:read',
    async data(reader) {
      const row = await getMessage(reader, messageId(message.direction, message.id), view);
      return type === 'chat.message.failed' ? { ...row, failure_reason: null } : row;
    },
  };
}
