import { allOf } from '../../auth/scopes.ts';
import { AppError } from '../../lib/errors.ts';
import type { RequestContext } from '../../lib/request-context.ts';
import { Call } from '../../services/calls/call.resource.ts';
import { CallRecordingLink, getCallRecording } from '../../services/calls/calls.ts';
import type { Row } from '../../services/resource.ts';
import { builder } from '../builder.ts';
import { objectType } from '../resource-types.ts';
import { restOne } from '../shared.ts';
import { CallType } from './types.ts';

/**
 * A call's recording link: GET /v1/calls/{id}/recording (Rest), and `recordingLink` on a Call
 * in GraphQL, as a message's media link is.
 */
const callsRead = allOf(Call.scopes);
const LinkType = objectType(CallRecordingLink);

builder.objectFields(CallType, (t) => ({
  recordingLink: t.field({
    type: LinkType,
    subGraphs: ['Public'],
    nullable: true,
    authScopes: callsRead,
    description:
      'A signed link to the recording, valid about 10 hours (GET /v1/calls/{id}/recording); null while there is none.',
    resolve: async (c: Row, _args: unknown, ctx: RequestContext) => {
      if (c.recording && !c.recording.available) return null;
      try {
        return await getCallRecording(ctx, ctx.services.calls, c.id);
      } catch (e) {
        if (e instanceof AppError && e.code === 'not_found') return null;
        throw e;
      }
    },
  }),
}));

builder.queryFields((t) => ({
  getCallRecording: t.field({
    type: restOne('CallRecordingLinkBody', LinkType),
    subGraphs: ['Rest'],
    authScopes: callsRead,
    description: "A signed link to the call's recording, valid about 10 hours; 404 while it has none.",
    args: { id: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => ({
      data: await getCallRecording(ctx, ctx.services.calls, args.id),
    }),
  }),
}));
