import type { EntityClass } from '@mikro-orm/core';
import type { z } from 'zod';
import type { Scope } from '../auth/scopes.ts';
import type { ClinicKind } from '../entities/clinic.ts';
import type { EventType } from '../events/types.ts';
import { AppError } from '../lib/errors.ts';
import type { IdKind } from '../lib/ids.ts';
import type { Principal, RequestContext } from '../lib/request-context.ts';
import { readDate } from '../lib/timestamps.ts';
import { type Groups, type Resource, type Row, restGroups, type Shape } from './resource.ts';
import type { Write, WriteReader } from './unit-of-work.ts';

/**
 * What a write is: its definition (route, input, answer, event, work) and the context its work
 * runs in. The runner is ./writes.ts.
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
   * What REST answers, when `shown` makes it more than `resource` (a sample's envelope, `test`
   * included): its type in the Rest schema, so the OpenAPI document says so. GraphQL answers
   * `resource`'s type, as every write.
   */
  restShape?: Shape;
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
  /**
   * Stores on `entity` every plain column (FieldWrite: a column, not `byRun`) of the write's
   * resource that the body holds: absent keeps, null clears. References and rules stay in `run`.
   */
  setFields(entity: object, input: object): void;
  /**
   * A new row's plain columns from a create's body, by property (left out: null), to spread
   * into an insertRow or em.create beside what `run` decides.
   */
  insertFields(input: object): Record<string, unknown>;
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
