import { allOf } from '../auth/scopes.ts';
import { camelOf } from '../lib/names.ts';
import type { RequestContext } from '../lib/request-context.ts';
import { allWrites } from '../services/all-writes.ts';
import type { WriteOperation } from '../services/writes.ts';
import { restFieldOf } from '../services/writes.ts';
import { builder } from './builder.ts';
import { inInputNames } from './input-errors.ts';
import { objectType, restObjectType } from './resource-types.ts';
import { restList, restOne } from './shared.ts';
import {
  hasId,
  otherIds,
  payloadMembersOf,
  publicWrite,
  publicWriteAnswer,
  restWrite,
} from './write-faces.ts';
import { bodyOfInput, inputOf } from './write-inputs.ts';

/**
 * Every write of src/services/*: a GraphQL mutation (Public) and a Rest field served at the
 * route's method and path (src/rest/direct.ts), both running `performWrite`. REST hands over the
 * body as app.ts read it (JSON, never coerced by GraphQL), with the Idempotency-Key and
 * If-Match headers. GraphQL has one style for every mutation, chat's included (docs/graphql.md):
 * `name(input: NameInput!): NamePayload!`, the input holding the object's `id`, the body's
 * fields in camelCase, `idempotencyKey` (creating writes) and `expectedUpdatedAt` (writes to an
 * existing object), the payload the written object under its own name (`patient`).
 */
const capitalized = (s: string) => s[0].toUpperCase() + s.slice(1);
const lowered = (s: string) => s[0].toLowerCase() + s.slice(1);

/** The payload's field for the written object: `patient`, or `workingIntervals` for a list. */
export const payloadFieldOf = (op: WriteOperation) =>
  op.list ? `${lowered(op.list.item.name)}s` : lowered(op.resource.name);

/**
 * What a path id names: the object written, or the kind the path says for a write that adds to
 * a parent (a patient's new payment: `ifMatch: false`) and for an id below `:id` (a delivery).
 */
function idText(op: WriteOperation, key: string) {
  const kind = key === 'id' && op.ifMatch !== false ? op.resource.name : (op.ids?.[key] ?? op.resource.name);
  const about =
    key === 'id' && kind !== op.resource.name ? ` (the new ${op.resource.name} belongs to it)` : '';
  return `The ${kind}'s id${about}.`;
}

function inputFields(op: WriteOperation) {
  return (t: any) => ({
    ...(hasId(op) ? { id: t.id({ required: true, description: idText(op, 'id') }) } : {}),
    ...Object.fromEntries(
      otherIds(op).map((k) => [camelOf(k), t.id({ required: true, description: idText(op, k) })]),
    ),
    ...(op.method === 'POST'
      ? {
          idempotencyKey: t.string({
            required: false,
            description:
              'A key of your choosing (up to 255 characters): the same key and input within 24 hours answer the first result and write nothing.',
          }),
        }
      : {}),
    ...(hasId(op) && op.ifMatch !== false
      ? {
          expectedUpdatedAt: t.string({
            required: false,
            description:
              "The object's updatedAt as last read: when it has changed since, the write is refused (precondition_failed) and changes nothing.",
          }),
        }
      : {}),
  });
}

function payloadOf(op: WriteOperation) {
  const name = `${capitalized(op.name)}Payload`;
  const field = payloadFieldOf(op);
  const type: any = op.list ? [objectType(op.list.item)] : objectType(op.resource);
  const members = payloadMembersOf(op);
  return builder.objectRef<Record<string, any>>(name).implement({
    subGraphs: ['Public'],
    description: `What ${op.name} answers.`,
    fields: (t) => ({
      [field]: t.field({
        type,
        description: op.list
          ? `The ${op.list.item.name} list as it is now.`
          : `The ${op.resource.name} as written (as a read of it answers now).`,
        resolve: (p) => p[field] as any,
      }),
      ...(members?.(t) ?? {}),
    }),
  });
}

builder.mutationFields((t) => {
  const fields: Record<string, any> = {};
  for (const op of allWrites()) {
    const authScopes = allOf(op.scopes);
    const extra = inputFields(op);
    const input = inputOf(op.input, `${capitalized(op.name)}Input`, extra, `The input of ${op.name}.`);
    const required =
      hasId(op) || Object.values(op.input.shape).some((f: any) => !f.safeParse(undefined).success);
    const field = payloadFieldOf(op);
    fields[op.name] = t.field({
      type: payloadOf(op),
      subGraphs: ['Public'],
      authScopes,
      description: `${op.summary} (${op.method} /v1${op.path.replace(/:([a-z_]+)/g, '{$1}')}).${op.description ? ` ${op.description}` : ''}`,
      args: { input: t.arg({ type: input, required, description: `The input of ${op.name}.` }) },
      resolve: async (_root: unknown, args: any, ctx: RequestContext): Promise<any> => {
        const given = args.input ?? {};
        const body = bodyOfInput(given, op.input);
        try {
          if (op.members) {
            const { data, ...members } = (await publicWriteAnswer(ctx, op, body, given)) as Record<
              string,
              any
            >;
            return { [field]: data, ...members };
          }
          return { [field]: await publicWrite(ctx, op, body, given) };
        } catch (err) {
          // The services name REST's fields and headers; the caller wrote the input's.
          throw inInputNames(err);
        }
      },
    });
    if (op.faces === 'own') continue;
    const answered = op.restShape ?? op.resource;
    const body = op.list
      ? restList(`${op.list.item.name}List`, objectType(op.list.item))
      : restOne(`${answered.name}Body`, op.restShape ? restObjectType(op.restShape) : objectType(answered));
    fields[restFieldOf(op)] = t.field({
      type: body,
      subGraphs: ['Rest'],
      authScopes,
      // The operation's description in the OpenAPI document (rest/openapi-operation.ts).
      ...(op.description ? { description: op.description } : {}),
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
