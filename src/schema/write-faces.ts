import { AppError } from '../lib/errors.ts';
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
const paramsOf = (op: WriteOperation, args: any) =>
  otherIds(op).length ? { params: Object.fromEntries(otherIds(op).map((k) => [k, String(args[k])])) } : {};

function restBody(ctx: RequestContext): unknown {
  return ctx.body ?? {};
}

/** A write's Rest field: the REST body with the Idempotency-Key and If-Match headers (also for `faces: 'own'`). */
export function restWrite(ctx: RequestContext, op: WriteOperation, args: any): Promise<any> {
  return performWrite(ctx, op, restBody(ctx), restArgs(ctx, op, args));
}

/** A write's GraphQL mutation: its input as the body, `idempotency_key` and `expected_updated_at` (also for `faces: 'own'`). */
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

function publicArgs(op: WriteOperation, args: any): WriteArgs {
  return {
    id: args.id == null ? undefined : String(args.id),
    idempotencyKey: args.idempotency_key ?? undefined,
    expected: expectedVersion(args.expected_updated_at, 'expected_updated_at'),
    ...paramsOf(op, args),
  };
}
