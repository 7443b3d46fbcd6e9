import type { EntityClass } from '@mikro-orm/core';
import { LockMode } from '@mikro-orm/core';
import type { z } from 'zod';
import type { Scope } from '../auth/scopes.ts';
import { runNamed, statementOf } from '../db/named-statements.ts';
import type { ClinicKind } from '../entities/clinic.ts';
import type { EventType } from '../events/types.ts';
import { AppError, notFound } from '../lib/errors.ts';
import { type IdKind, tryParseId } from '../lib/ids.ts';
import type { Principal, RequestContext } from '../lib/request-context.ts';
import { readDate } from '../lib/timestamps.ts';
import { catalogListOfKind } from './catalog/catalog.ts';
import { checkIdempotencyKey, idempotent, requestHash } from './idempotency.ts';
import { presentById } from './present-by-id.ts';
import { type Groups, type Resource, type Row, restGroups, type Shape } from './resource.ts';
import { clinicWrite, type Write, type WriteReader } from './unit-of-work.ts';
import { parseInput } from './write-input.ts';

/**
 * Write operations: one definition per write, from which its REST route (src/rest/routes.ts),
 * its Rest field for SOFA and its GraphQL mutation (src/schema/writes.ts), its OpenAPI body
 * (src/rest/request-bodies.ts) and its event follow. `performWrite` is the one runner: the body
 * checked against the input definition, `Idempotency-Key` on every POST, `If-Match` on every
 * change of an existing object, the work in the one unit of work, the written object presented
 * through the same transaction as its event's `data` and the response (docs/adding-a-resource.md).
 */
export interface WriteOperation<S extends z.ZodObject = z.ZodObject, P = unknown> {
  /** The GraphQL mutation's name; the Rest field is `rest` + Name. */
  name: string;
  method: 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Under /v1, `:id` for the object's id. */
  path: string;
  ids?: Record<string, IdKind>;
  /** 202: the write queues work whose result shows later (a webhook delivery's retry). */
  status: 200 | 201 | 202;
  tag: string;
  summary: string;
  description?: string;
  scopes: Scope[];
  input: S;
  example: Record<string, unknown>;
  /** What the write answers: the written object, as a GET of it answers. */
  resource: Resource;
  /**
   * A PUT that replaces a bounded list the path's object owns (a provider's working hours)
   * answers that list as its GET does: `{data: [...]}` of `item` in REST, a list in GraphQL, read
   * by `read` through the write's transaction for the id `run` answered (`resource` is then the
   * owner's definition). Its version is the owner's: `read` answers the rows with the owner's
   * `updated_at` as the array's own (unserialised) property, which the ETag reads, and If-Match
   * is checked against the owner as `w.load` loads it.
   */
  list?: { item: Shape; read(reader: WriteReader, id: number): Promise<Row[]> };
  /** Clinics where the route exists (patients at dental ones, clients and animals at veterinary ones); elsewhere a 404. */
  clinicKinds?: readonly ClinicKind[];
  /** The groups of the answer and the event's data; default: the detailed format. */
  groups?: (p: Principal) => Groups;
  /** The event the write records, when the spec has one for it. */
  event?: EventType | ((p: Principal) => EventType);
  /**
   * false: the path's object is a parent the write adds to (a patient's new payment), not the
   * object it changes, so If-Match does not apply (and 412 is not documented).
   */
  ifMatch?: false;
  /** Refusals beyond a body's validation (documented in OpenAPI, tested). */
  errors?: Record<string, { code: string; description: string; message: string; param?: string }>;
  /**
   * Optional work before the transaction, for what must not hold a transaction open (a call
   * recording's download: seconds of network I/O). Runs once, after the body is parsed, inside
   * the Idempotency-Key guard; it may refuse early (404, 412, 422) so nothing slow is done for a
   * request that cannot succeed. `expected` is the If-Match version. Its result goes to `run`,
   * which checks again under the row lock: the object may change in between.
   */
  prepare?(
    ctx: RequestContext,
    input: z.output<S>,
    id: string | undefined,
    expected: number | '*' | undefined,
  ): Promise<P>;
  /**
   * The work, inside the transaction: changes entities and answers the written object's id, and
   * any further events the change causes (an owner's change: each of its animals').
   */
  run(w: WriteContext, input: z.output<S>, id: string | undefined, prepared: P): Promise<number | Written>;
  /**
   * What the key is shown of the answer (its `data`), judged as it is sent, the first time and on
   * an Idempotency-Key replay alike, against the object as it is now: it may refuse (an object the
   * key may no longer see: a replay answers nothing the key may not see now) or show more than a
   * GET does (a webhook subscription's whole secret, which every read masks, while it is still the
   * one this write made). What it adds is never stored with the answer (nor in the event's
   * `data`). `id` is the path's `:id`.
   */
  shown?(ctx: RequestContext, answer: Row, id: string | undefined): Promise<Row>;
  /**
   * How the written object is presented, when a GET of it presents more than its definition
   * (chat's matched patients): the answer and the event's `data`, read through the transaction.
   */
  present?(reader: WriteReader, id: number): Promise<Row>;
  /**
   * 'own': the Rest field is written in the domain's schema (chat's keep their REST answer
   * types), calling `performWrite`; the GraphQL mutation is generated as for every write
   * (src/schema/writes.ts), and so is everything else (route, OpenAPI body, idempotency,
   * If-Match, ETag, events).
   */
  faces?: 'own';
  /**
   * The body's own check, for a write whose refusals name fields in words its clients rely on
   * (the chat send: field by field, src/services/chat/send-input.ts); `input` then only
   * documents it. Runs where `input` would: inside the Idempotency-Key guard, before `prepare`.
   */
  parse?(body: unknown, ctx: RequestContext): z.output<S>;
  /**
   * The answer is `{data, ...members}` (`Written.members`: the chat send's `meta`), stored whole
   * for an Idempotency-Key replay; `data` is the written object, whose `updated_at` is the ETag.
   * Without it the answer is the object itself.
   */
  members?: true;
}

export interface Written {
  id: number;
  /** Top-level members of the answer beside `data` (only for a write with `members: true`). */
  members?: Record<string, unknown>;
  also?: { type: string; resource: Resource; id: number; groups: Groups }[];
}

export interface WriteContext extends Write {
  principal: Principal;
  /** The path's ids other than `:id` (ids beyond `id`), as given: `/webhooks/:id/deliveries/:delivery_id/retry`. */
  params: Readonly<Record<string, string>>;
  /**
   * The object the path names, locked for the rest of the transaction: a 404 when it is not the
   * clinic's, a 412 when the caller's If-Match names another version.
   */
  load<E extends { updatedAt: Date }>(
    entity: EntityClass<E>,
    kind: IdKind,
    id: string | undefined,
  ): Promise<E>;
  /**
   * A referenced record of the clinic, or the 422 naming `param` (another clinic's id is the same
   * 422, and so is a disabled catalog entry).
   */
  ref<E extends object>(entity: EntityClass<E>, id: number, param: string): Promise<E>;
  /**
   * Several references checked in one statement, each as `ref` checks it (param: its key), and
   * answered as references (not loaded). `also` reads columns of a referenced row on the way
   * (an appointment type's duration), as `values[key][prop]`. `lock: [space, key]` takes a
   * transaction-scoped advisory lock on the id of reference `key` in the same statement (a
   * booking's provider lock: one round trip less), and only when that record is the clinic's,
   * so no key can hold another clinic's lock.
   */
  refs<K extends string>(
    wanted: Record<K, [EntityClass<any>, number | null | undefined, ...string[]]>,
    opts?: { lock?: [number, NoInfer<K>] },
  ): Promise<{ refs: Record<K, any>; values: Record<string, Record<string, unknown>> }>;
}

const registry: WriteOperation[] = [];

export function defineWrite<S extends z.ZodObject, P = unknown>(
  op: WriteOperation<S, P>,
): WriteOperation<S, P> {
  if (registry.some((o) => o.name === op.name)) throw new Error(`write ${op.name}: defined twice.`);
  registry.push(op as unknown as WriteOperation);
  return op;
}

/** Every write defined so far (their modules are imported by src/services/all-writes.ts). */
export const allWrites = (): readonly WriteOperation[] => registry;

export const restFieldOf = (op: WriteOperation) => `rest${op.name[0].toUpperCase()}${op.name.slice(1)}`;

const DETAILED = restGroups(true, []);

export const groupsOf = (op: WriteOperation, p: Principal) => op.groups?.(p) ?? DETAILED;

/** `"<ms>"`: the ETag of a presented object, from its `updated_at` (which every change moves forward). */
export function etagOf(data: Row | null | undefined): string | undefined {
  const at = data?.updated_at;
  return typeof at === 'string' ? `"${new Date(at).getTime()}"` : undefined;
}

/** If-Match (`"<ms>"`, `*`) or GraphQL's expected_updated_at (ISO): the version expected, in ms. */
export function expectedVersion(ifMatch: unknown, param: string): number | '*' | undefined {
  if (ifMatch === undefined || ifMatch === null || ifMatch === '') return undefined;
  const v = String(ifMatch).trim();
  if (v === '*') return '*';
  const m = /^"(\d{1,16})"$/.exec(v);
  // GraphQL's ISO form goes through the one date check (a real calendar date in range).
  const iso = m || param === 'If-Match' ? null : readDate(v, 'date-time');
  const ms = m ? Number(m[1]) : iso && 'date' in iso ? iso.date.getTime() : Number.NaN;
  if (Number.isNaN(ms))
    throw new AppError(
      'validation_failed',
      param === 'If-Match'
        ? 'If-Match must be the ETag a GET of the object answered, e.g. "1764072000123".'
        : `${param} must be the updated_at a read of the object answered (ISO 8601).`,
      { param },
    );
  return ms;
}

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

function loader(w: Write, expected: number | '*' | undefined): WriteContext['load'] {
  return async (entity, kind, publicId) => {
    const n = publicId == null ? null : tryParseId(kind, publicId);
    const found =
      n == null
        ? null
        : await w.em.findOne(entity, { id: n } as any, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!found)
      throw notFound(
        kind.replace(/[A-Z]/g, (c, i) => (i ? ' ' : '') + c.toLowerCase()),
        String(publicId),
      );
    checkVersion(kind, found.updatedAt, expected);
    return found;
  };
}

/** The 412 when `expected` (If-Match, in ms) names another version than `updatedAt` (also for a `prepare` step's early check). */
export function checkVersion(
  kind: IdKind,
  updatedAt: Date | string,
  expected: number | '*' | undefined,
): void {
  if (expected !== undefined && expected !== '*' && new Date(updatedAt).getTime() !== expected)
    throw new AppError(
      'precondition_failed',
      `The ${kind.toLowerCase()} changed since the version If-Match names (its updated_at is now ${new Date(updatedAt).toISOString()}); read it again and retry. Nothing was changed.`,
      { param: 'If-Match' },
    );
}

/** Whether `disabledAt` means "no longer offered" (catalog entries), not another kind of disabled. */
const isCatalogEntry = (w: Write, entity: EntityClass<any>) =>
  catalogListOfKind(w.em.getMetadata().get(entity).className) !== undefined;

const unknownRef = (param: string) =>
  new AppError('validation_failed', `${param}: no such record at this clinic.`, { param });
const disabledRef = (param: string) =>
  new AppError('validation_failed', `${param}: that entry is disabled; enable it first or pick another.`, {
    param,
  });

function batchReferrer(w: Write): WriteContext['refs'] {
  return async (wanted, opts = {}) => {
    const asked = (
      Object.entries(wanted) as [string, [EntityClass<any>, number | null | undefined, ...string[]]][]
    ).filter(([, [, id]]) => id != null) as [string, [EntityClass<any>, number, ...string[]]][];
    const refs: Record<string, any> = Object.fromEntries(Object.keys(wanted).map((k) => [k, null]));
    const values: Record<string, Record<string, unknown>> = {};
    if (!asked.length) return { refs, values };
    const params: unknown[] = [];
    const tableOf = (entity: EntityClass<any>) => w.em.getMetadata().get(entity).tableName;
    const locked = opts.lock
      ? (wanted as Record<string, [EntityClass<any>, unknown]>)[opts.lock[1]]
      : undefined;
    const lock =
      opts.lock && locked?.[1] != null
        ? [
            `(select pg_advisory_xact_lock(?, t.id) from "${tableOf(locked[0])}" t where t.clinic_id = ? and t.id = ?) as "lock"`,
          ]
        : [];
    if (lock.length) params.push(opts.lock?.[0], w.clinicId, locked?.[1]);
    const selects = asked.map(([, [entity, id, ...props]], i) => {
      const meta = w.em.getMetadata().get(entity);
      const column = (prop: string) => `t."${meta.properties[prop].fieldNames[0]}"`;
      // 0: unknown (or another clinic's), 1: usable, 2: disabled, then the columns asked for.
      const state = isCatalogEntry(w, entity)
        ? `case when ${column('disabledAt')} is null then 1 else 2 end`
        : '1';
      params.push(w.clinicId, id);
      return `(select json_build_array(${[state, ...props.map(column)].join(', ')}) from "${meta.tableName}" t where t.clinic_id = ? and t.id = ?) as "r${i}"`;
    });
    const { rows } = await runNamed(w.em, statementOf(`select ${[...lock, ...selects].join(', ')}`), params);
    const row = rows[0] as Record<string, unknown[] | null>;
    asked.forEach(([param, [entity, id, ...props]], i) => {
      const found = row[`r${i}`];
      if (!found) throw unknownRef(param);
      if (found[0] === 2) throw disabledRef(param);
      refs[param] = w.em.getReference(entity, id);
      if (props.length) values[param] = Object.fromEntries(props.map((p, j) => [p, found[j + 1]]));
    });
    return { refs, values };
  };
}

function referrer(w: Write): WriteContext['ref'] {
  return async (entity, id, param) => {
    const found = await w.em.findOne(entity, { id } as any);
    if (!found) throw unknownRef(param);
    // A disabled catalog entry stays with what named it before, but a write cannot name it anew.
    if (isCatalogEntry(w, entity) && (found as { disabledAt?: Date | null }).disabledAt)
      throw disabledRef(param);
    return found;
  };
}

declare module '../lib/request-context.ts' {
  interface AppServices {
    writes: { idempotencyLeaseMs: number };
  }
}
