import { AppError } from '../lib/errors.ts';
import type { RequestContext } from '../lib/request-context.ts';
import { checkIdempotencyKey, idempotent, requestHash } from './idempotency.ts';
import { presentById } from './present-by-id.ts';
import type { Groups, Resource, Row } from './resource.ts';
import { clinicWrite, type WriteReader } from './unit-of-work.ts';
import { etagOf, groupsOf, type WriteContext, type WriteOperation } from './write-definition.ts';
import { fieldSetter } from './write-fields.ts';
import { parseInput } from './write-input.ts';
import { batchReferrer, loader, referrer } from './write-refs.ts';

/**
 * Write operations: one definition per write (./write-definition.ts), from which its REST route
 * (src/rest/routes.ts), its Rest field for SOFA and its GraphQL mutation (src/schema/writes.ts),
 * its OpenAPI body (src/rest/request-bodies.ts) and its event follow. `performWrite` here is the
 * one runner: the body checked against the input definition, `Idempotency-Key` on every POST,
 * `If-Match` on every change of an existing object, the work in the one unit of work, the written
 * object presented through the same transaction as its event's `data` and the response
 * (docs/adding-a-resource.md).
 */
export * from './write-definition.ts';
export { checkVersion, refuseDisabled } from './write-refs.ts';

export interface WriteArgs {
  id?: string;
  idempotencyKey?: unknown;
  /** If-Match or expected_updated_at, as `expectedVersion` read it. */
  expected?: number | '*';
  /** The path's other ids (WriteOperation.ids beyond `id`). */
  params?: Record<string, string>;
}

/** A write's answer with its members beside `data` (`WriteOperation.members`). */
export interface WriteAnswer {
  data: Row;
  [member: string]: unknown;
}

/** The written object, as a GET of it answers (the data of a write with members). */
export async function performWrite(
  ctx: RequestContext,
  op: WriteOperation,
  body: unknown,
  args: WriteArgs,
): Promise<Row> {
  return (await performWriteAnswer(ctx, op, body, args)).data;
}

export async function performWriteAnswer(
  ctx: RequestContext,
  op: WriteOperation,
  body: unknown,
  args: WriteArgs,
): Promise<WriteAnswer> {
  const { principal } = ctx;
  if (args.expected !== undefined && (op.ifMatch === false || !op.path.includes(':id')))
    throw new AppError(
      'validation_failed',
      `If-Match does not apply to ${op.method} ${op.path}${op.method === 'POST' ? ': it creates an object' : ''}.`,
      {
        param: 'If-Match',
      },
    );
  if (op.clinicKinds && !op.clinicKinds.includes(principal.clinicKind))
    throw new AppError(
      'not_found',
      `${op.method} ${op.path} exists at ${op.clinicKinds.join(' and ')} clinics only.`,
    );
  const key = op.method === 'POST' ? checkIdempotencyKey(args.idempotencyKey) : undefined;
  const now = ctx.clock.now();
  const stored = await idempotent(
    ctx.em,
    {
      keyId: principal.keyId,
      clinicId: principal.clinicId,
      key,
      hash: requestHash({
        operation: op.name,
        id: args.id ?? null,
        body,
        ...(args.params ? { params: args.params } : {}),
      }),
      now,
      leaseMs: ctx.services.writes.idempotencyLeaseMs,
    },
    // Checked inside: a key reused with another body is a 409 whatever that body holds, and a
    // refused body frees its key for the corrected retry.
    async () => {
      const input = op.parse ? op.parse(body, ctx) : parseInput(op.input, body);
      const prepared = op.prepare ? await op.prepare(ctx, input, args.id, args.expected) : undefined;
      // The write's time after `prepare` (a download can take seconds): its rows and events carry it.
      const at = op.prepare ? ctx.clock.now() : now;
      return { status: op.status, body: await write(ctx, op, input, args, at, prepared) };
    },
  );
  const kept: WriteAnswer = op.members ? (stored.body as WriteAnswer) : { data: stored.body };
  // Before any header: an answer refused now is an error, not a replay.
  const answer = op.shown ? { ...kept, data: await op.shown(ctx, kept.data, args.id) } : kept;
  if (stored.replayed) ctx.setHeader('idempotent-replayed', 'true');
  const etag = etagOf(answer.data);
  if (etag) ctx.setHeader('etag', etag);
  return answer;
}

/**
 * Thrown by a write that lost a race the database decided (a constraint two transactions could
 * not both pass): the write runs once more, and its checks then see the winner and say so.
 */
export class RaceLost extends Error {}

async function write(
  ctx: RequestContext,
  op: WriteOperation,
  input: unknown,
  args: WriteArgs,
  now: Date,
  prepared: unknown,
) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await writeOnce(ctx, op, input, args, now, prepared);
    } catch (e) {
      if (!(e instanceof RaceLost)) throw e;
      if (attempt === 2)
        throw new AppError(
          'conflict',
          'A concurrent change took what this write needed; read again and retry.',
        );
    }
  }
}

async function writeOnce(
  ctx: RequestContext,
  op: WriteOperation,
  input: unknown,
  args: WriteArgs,
  now: Date,
  prepared: unknown,
) {
  const { principal } = ctx;
  const groups = groupsOf(op, principal);
  let members: Record<string, unknown> | undefined;
  const data = await clinicWrite(
    ctx.em,
    {
      id: principal.clinicId,
      kind: principal.clinicKind,
      country: principal.country,
      mode: principal.clinicMode,
    },
    now,
    async (w) => {
      const wc: WriteContext = {
        ...w,
        principal,
        params: args.params ?? {},
        load: loader(w, args.expected),
        ref: referrer(w),
        refs: batchReferrer(w),
        ...fieldSetter(op.resource),
      };
      const result = await op.run(wc, input as Record<string, unknown>, args.id, prepared);
      const written = typeof result === 'number' ? { id: result } : result;
      const type = typeof op.event === 'function' ? op.event(principal) : op.event;
      if (type) w.record(eventOf(type, op.resource, written.id, groups, op.present));
      for (const e of written.also ?? []) w.record(eventOf(e.type, e.resource, e.id, e.groups));
      members = written.members;
      return written.id;
    },
    (reader, id): Promise<Row> =>
      op.list
        ? op.list.read(reader, id)
        : op.present
          ? op.present(reader, id)
          : presentById(reader, op.resource, id, groups),
  );
  return op.members ? { data, ...members } : data;
}

const eventOf = (
  type: string,
  resource: Resource,
  id: number,
  groups: Groups,
  present?: WriteOperation['present'],
) => ({
  type,
  scope: resource.scopes[0] ?? '',
  data: (reader: WriteReader) => (present ? present(reader, id) : presentById(reader, resource, id, groups)),
});

declare module '../lib/request-context.ts' {
  interface AppServices {
    writes: { idempotencyLeaseMs: number };
  }
}
