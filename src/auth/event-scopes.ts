import { EVENT_TYPES, type EventType } from '../events/types.ts';
import type { Scope } from './scopes.ts';

/**
 * The scope a key needs, beside webhooks:manage, to see events of a type (listed or delivered):
 * "any chat.* event type requires chat:read on the key" (spec, Webhook subscriptions), since a
 * chat event carries the message body. No other family needs one.
 */
export function scopeToSee(type: EventType): Scope | undefined {
  return type.startsWith('chat.') ? 'chat:read' : undefined;
}

/** Every scope some event type needs (`scopeToSee`): what the outbox's `scope` column is compared with. */
export const GATING_SCOPES: readonly Scope[] = [
  ...new Set(EVENT_TYPES.map(scopeToSee).filter((s): s is Scope => s !== undefined)),
];
