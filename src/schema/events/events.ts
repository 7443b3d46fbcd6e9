import { allOf } from '../../auth/scopes.ts';
import { relayPageArgs } from '../../db/list.ts';
import { EventTypeSet } from '../../events/types.ts';
import type { RequestContext } from '../../lib/request-context.ts';
import { EventEnvelope } from '../../services/events/event.resource.ts';
import { getEvent, listEvents } from '../../services/events/events.ts';
import { builder } from '../builder.ts';
import { enumTypeOf } from '../enums.ts';
import { type Face, nameOn, withServiceArgs } from '../face-args.ts';
import { nodeType } from '../resource-types.ts';
import { connectionField, restOne, restPage, toConnection, toRestPage } from '../shared.ts';

/**
 * The outbox read back: GET /v1/events and /v1/events/{id} (Rest fields) and the Public
 * `events` connection and `node(id:)`, over the one list (src/services/events/events.ts).
 */
export const EventType = nodeType(EventEnvelope, (id, ctx) => getEvent(ctx, id));

const authScopes = allOf(EventEnvelope.scopes);

/** The order, naming the argument as `face` does. */
const order = (face: Face) =>
  `Newest first; with ${nameOn(face, 'created_since')}, oldest first (incremental sync). chat.* events only with chat:read on the key.`;

builder.queryFields((t) => ({
  events: connectionField(t, EventType, {
    subGraphs: ['Public'],
    nullable: true,
    authScopes,
    description: `The clinic's events (the last 30 days by default: docs/limits.md). ${order('Public')}`,
    args: {
      types: t.arg({
        type: [enumTypeOf(EventTypeSet)],
        required: false,
        description: 'Only these event types; a chat.* type needs chat:read (else forbidden).',
      }),
      createdSince: t.arg.string({
        required: false,
        description: 'Created at or after this time (ISO 8601 with a zone, or a date); oldest first.',
      }),
    },
    resolve: (_root, args, ctx: RequestContext) =>
      withServiceArgs(args, async (a) =>
        toConnection(
          await listEvents(ctx, {
            type: a.types ?? undefined,
            typeParam: 'types',
            created_since: a.created_since,
            ...relayPageArgs(a),
          }),
        ),
      ),
  }),
  listEvents: t.field({
    type: restPage('EventPage', EventType),
    subGraphs: ['Rest'],
    authScopes,
    description: order('Rest'),
    args: {
      type: t.arg({
        type: 'CommaList',
        required: false,
        description: 'Only these event types: repeat it or separate them by commas.',
      }),
      created_since: t.arg.string({ required: false }),
      limit: t.arg({ type: 'Limit', required: false, description: 'Page size, 1 to 100 (default 25).' }),
      cursor: t.arg.string({ required: false, description: 'next_cursor of the previous page, verbatim.' }),
    },
    resolve: async (_root, args, ctx: RequestContext) => toRestPage(await listEvents(ctx, args)),
  }),
  getEvent: t.field({
    type: restOne('EventBody', EventType),
    subGraphs: ['Rest'],
    description: 'One event, as a webhook delivery carries it; 404 when the clinic has none with that id.',
    authScopes,
    args: { id: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx: RequestContext) => ({ data: await getEvent(ctx, args.id) }),
  }),
}));
