import { invalid } from '../../lib/errors.ts';
import { Direction } from '../closed-sets.ts';
import { booleanParam, enumParam, instantParam, phoneParam } from '../params.ts';
import { MessageType } from './message.resource.ts';

export { booleanParam, enumParam, instantParam, phoneParam } from '../params.ts';

/**
 * The chat lists' query parameters, checked once for REST and GraphQL alike: a bad value of any
 * is a 422 naming it. REST hands over strings, GraphQL typed values (an enum's REST value); both
 * are accepted. The closed sets are the resource's (message.resource.ts).
 */
export const DIRECTIONS = Direction.values;
export const MESSAGE_TYPES = MessageType.values;

export interface MessageFilterArgs {
  direction?: unknown;
  type?: unknown;
  phone?: unknown;
  from?: unknown;
  to?: unknown;
  updated_since?: unknown;
}

export interface MessageFilters {
  direction?: (typeof DIRECTIONS)[number];
  type?: (typeof MESSAGE_TYPES)[number];
  phone?: string;
  from?: Date;
  to?: Date;
  updatedSince?: Date;
}

export function messageFilters(args: MessageFilterArgs, country: string): MessageFilters {
  const out: MessageFilters = {
    direction: enumParam(args.direction, 'direction', DIRECTIONS),
    type: enumParam(args.type, 'type', MESSAGE_TYPES),
    phone: phoneParam(args.phone, country),
    from: instantParam(args.from, 'from'),
    to: instantParam(args.to, 'to'),
    updatedSince: instantParam(args.updated_since, 'updated_since'),
  };
  if (out.from && out.to && out.from >= out.to) throw invalid('to', 'to must be later than from.');
  return out;
}

export interface ConversationFilterArgs {
  phone?: unknown;
  is_handled?: unknown;
  updated_since?: unknown;
}

export function conversationFilters(args: ConversationFilterArgs, country: string) {
  return {
    phone: phoneParam(args.phone, country),
    isHandled: booleanParam(args.is_handled, 'is_handled'),
    updatedSince: instantParam(args.updated_since, 'updated_since'),
  };
}
