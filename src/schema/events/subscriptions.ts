import { allOf } from '../../auth/scopes.ts';
import { EventTypeSet } from '../../events/types.ts';
import type { RequestContext } from '../../lib/request-context.ts';
import { EventEnvelope } from '../../services/events/event.resource.ts';
import { liveEvents } from '../../services/events/live.ts';
import { builder } from '../builder.ts';
import { enumTypeOf } from '../enums.ts';
import { EventType } from './events.ts';

/**
 * GraphQL subscriptions, served over graphql-ws at /graphql only (src/server/websocket.ts):
 * Public, never Rest (SOFA would make webhook routes of them).
 */
builder.subscriptionType({
  subGraphs: ['Public'],
  description: "Live streams over graphql-ws: the clinic's events, and the chat inbox's changes.",
});

builder.subscriptionFields((t) => ({
  events: t.field({
    type: EventType,
    authScopes: allOf(EventEnvelope.scopes),
    description:
      "The clinic's events as they are committed, in ascending id order (an event waits for writes in flight that took a lower id), each the envelope a webhook delivery carries (id, type, createdAt; data is the delivery's JSON exactly, snake_case keys as REST's). chat.* events only with chat:read. With `after`, the events after that id are replayed from the outbox first (oldest first, within retention), then live ones follow with no gap and no duplicate: the last id seen is a complete cursor.",
    args: {
      types: t.arg({
        type: [enumTypeOf(EventTypeSet)],
        required: false,
        description: 'Only these event types; an unknown one is refused, a chat.* type needs chat:read.',
      }),
      after: t.arg.id({
        required: false,
        description: 'The last event id the client saw (evt_…): replay what came after it first.',
      }),
    },
    subscribe: (_root, args, ctx: RequestContext) =>
      liveEvents(ctx, ctx.services.events.hub, {
        types: args.types ?? undefined,
        after: args.after ?? undefined,
      }),
    resolve: (envelope) => envelope as any,
  }),
}));
