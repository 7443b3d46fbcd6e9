import { AppError } from '../lib/errors.ts';
import { camelOf } from '../lib/names.ts';
import type { RequestContext } from '../lib/request-context.ts';
import {
  expectedVersion,
  performWrite,
  performWriteAnswer,
  type WriteArgs,
  type WriteOperation,
} from '../services/writes.ts';

/**
 * How a write's GraphQL and REST faces hand a request to `performWrite`: the generated ones
 * (src/schema/writes.ts) and those a domain writes itself (`faces: 'own'`: chat's). Registers
 * no field, so importing it changes no schema order.
 */
export const hasId = (op: WriteOperation) => op.path.includes(':id');
/** The path's ids beyond `:id` (a delivery's under its subscription), each a required argument. */
export const otherIds = (op: WriteOperation) => Object.keys(op.ids ?? {}).filter((k) => k !== 'id');
/** The path's further ids from a Rest field's arguments (`name` as is) or a mutation's input (camelCase). */
const paramsOf = (op: WriteOperation, args: any, name: (k: string) => string = (k) => k) =>
  otherIds(op).length
    ? { params: Object.fromEntries(otherIds(op).map((k) => [k, String(args[name(k)])])) }
    : {};

const payloadMembers = new Map<WriteOperation, (t: any) => Record<string, any>>();

/**
 * The payload fields of a write with members (`WriteOperation.members`) beside the written
 * object: the chat send's `meta` (src/schema/chat/mutations.ts).
 */
export function definePayloadMembers(op: WriteOperation, fields: (t: any) => Record<string, any>) {
  payloadMembers.set(op, fields);
}
export const payloadMembersOf = (op: WriteOperation) => payloadMembers.get(op);

function restBody(ctx: RequestContext): unknown {
  return ctx.body ?? {};
}

/** A write's Rest field: the REST body with the Idempotency-Key and If-Match headers (also for `faces: 'own'`). */
export function restWrite(ctx: RequestContext, op: WriteOperation, args: any): Promise<any> {
  return performWrite(ctx, op, restBody(ctx), restArgs(ctx, op, args));
}

/** A write's GraphQL mutation: its input as the body, and the input's `id`, `idempotencyKey` and `expectedUpdatedAt`. */
export function publicWrite(ctx: RequestContext, op: WriteOperation, body: unknown, args: any): Promise<any> {
  return performWrite(ctx, op, body, publicArgs(op, args));
}

/** `restWrite` and `publicWrite` of a write with members (`WriteOperation.members`): `{data, ...members}`. */
export const restWriteAnswer = (ctx: RequestContext, op: WriteOperation, args: any) =>
  performWriteAnswer(ctx, op, restBody(ctx), restArgs(ctx, op, args));
export const publicWriteAnswer = (ctx: RequestContext, op: WriteOperation, body: unknown, args: any) =>
  performWriteAnswer(ctx, op, body, publicArgs(op, args));

function restArgs(ctx: RequestContext, op: WriteOperation, args: any): WriteArgs {
  if (op.method !== 'POST' && ctx.idempotencyKey !== undefined)
    throw new AppError(
      'validation_failed',
      `Idempotency-Key goes with POST; ${op.method} is repeatable as it is.`,
      {
        param: 'Idempotency-Key',
      },
    );
  return {
    id: args.id,
    idempotencyKey: ctx.idempotencyKey,
    expected: expectedVersion(ctx.ifMatch, 'If-Match'),
    ...paramsOf(op, args),
  };
}

function publicArgs(op: WriteOperation, input: any): WriteArgs {
  return {
    id: input.id == null ? undefined : String(input.id),
    idempotencyKey: input.idempotencyKey ?? undefined,
    expected: expectedVersion(input.expectedUpdatedAt, 'expectedUpdatedAt'),
    ...paramsOf(op, input, camelOf),
  };
}
