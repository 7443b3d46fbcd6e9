import { allOf } from '../auth/scopes.ts';
import type { RequestContext } from '../lib/request-context.ts';
import { allWrites } from '../services/all-writes.ts';
import { restFieldOf } from '../services/writes.ts';
import { builder } from './builder.ts';
import { objectType } from './resource-types.ts';
import { restList, restOne } from './shared.ts';
import { hasId, otherIds, publicWrite, restWrite } from './write-faces.ts';
import { bodyOfInput, inputOf } from './write-inputs.ts';

/**
 * Every write of src/services/*: a GraphQL mutation (Public) and a Rest field served at the
 * route's method and path (src/rest/direct.ts), both running `performWrite`. REST hands over the
 * body as app.ts read it (JSON, never coerced by GraphQL), with the Idempotency-Key and
 * If-Match headers; GraphQL its typed `input` and the same two as arguments.
 */
const capitalized = (s: string) => s[0].toUpperCase() + s.slice(1);

builder.mutationFields((t) => {
  const fields: Record<string, any> = {};
  for (const op of allWrites()) {
    if (op.faces === 'own') continue;
    // A write that replaces a list (WriteOperation.list) answers the list, as its GET does.
    const type: any = op.list ? [objectType(op.list.item)] : objectType(op.resource);
    const body = op.list
      ? restList(`${op.list.item.name}List`, objectType(op.list.item))
      : restOne(`${op.resource.name}Body`, type);
    const authScopes = allOf(op.scopes);
    const input = inputOf(op.input, `${capitalized(op.name)}Input`);
    const empty = Object.keys(op.input.shape).length === 0;
    const allOptional = Object.values(op.input.shape).every((f: any) => f.safeParse(undefined).success);
    fields[op.name] = t.field({
      type,
      subGraphs: ['Public'],
      authScopes,
      description: `${op.summary} (${op.method} /v1${op.path.replace(/:([a-z_]+)/g, '{$1}')}).${op.description ? ` ${op.description}` : ''}`,
      args: {
        ...(hasId(op) ? { id: t.arg.id({ required: true }) } : {}),
        ...Object.fromEntries(otherIds(op).map((k) => [k, t.arg.id({ required: true })])),
        ...(empty ? {} : { input: t.arg({ type: input, required: !allOptional }) }),
        ...(op.method === 'POST'
          ? {
              idempotency_key: t.arg.string({
                required: false,
                description:
                  'The same key and input within 24 hours answer the first result and write nothing.',
              }),
            }
          : {}),
        ...(hasId(op) && op.ifMatch !== false
          ? {
              expected_updated_at: t.arg.string({
                required: false,
                description:
                  "The object's updated_at as last read: when it has changed since, the write is refused (precondition_failed) and changes nothing.",
              }),
            }
          : {}),
      },
      resolve: (_root: unknown, args: any, ctx: RequestContext): Promise<any> =>
        publicWrite(ctx, op, bodyOfInput(args.input ?? {}), args),
    });
    fields[restFieldOf(op)] = t.field({
      type: body,
      subGraphs: ['Rest'],
      authScopes,
      ...(hasId(op)
        ? {
            args: {
              id: t.arg.string({ required: true }),
              ...Object.fromEntries(otherIds(op).map((k) => [k, t.arg.string({ required: true })])),
            },
          }
        : {}),
      resolve: async (_root: unknown, args: any, ctx: RequestContext) => ({
        data: await restWrite(ctx, op, args),
      }),
    });
  }
  return fields;
});
