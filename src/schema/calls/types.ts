import { Call } from '../../services/calls/call.resource.ts';
import { getRecord } from '../../services/record-lists.ts';
import { restGroups } from '../../services/resource.ts';
import { nodeType } from '../resource-types.ts';

/** A call (`call_…`); node(id:) reaches it. */
export const CallType = nodeType(Call, (id, ctx) => getRecord(ctx, Call, id, restGroups(true, [])));
