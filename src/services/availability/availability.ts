import type { EntityManager } from '@mikro-orm/postgresql';
import { leanFind } from '../../db/lean.ts';
import { readAll, readByIds } from '../../db/list.ts';
import {
  Appointment,
  AppointmentType,
  Branch,
  Clinic,
  Provider,
  WorkingHours,
} from '../../entities/index.ts';
import { invalid } from '../../lib/errors.ts';
import { toId } from '../../lib/ids.ts';
import { readsOf, type ServiceContext } from '../../lib/request-context.ts';
import { dateParam, idParam } from '../params.ts';
import { CORE, defineShape, f, presenterFor, type Row } from '../resource.ts';
import {
  checkedZone,
  instantAt,
  type LocalDate,
  localDateAt,
  midnightOf,
  nextDate,
  plusDays,
} from './clinic-time.ts';

/**
 * GET /v1/availability (docs/decisions.md: availability): the free slots of an appointment type
 * in [from, to), from the providers' working hours (src/services/availability/working-hours.ts)
 * less their active bookings. A bounded list: no cursor, the range is at most 31 days.
 *
 * Slots start at each working interval's start and every SLOT_STEP_MINUTES after it, last the
 * type's duration_minutes, lie wholly inside the interval, overlap no active (not cancelled)
 * appointment of the provider at any branch (the definition of `appointment_no_overlap`), start
 * at or after the clock's now and inside [from, to). The wall-clock intervals become instants per
 * date in the clinic's zone (src/services/availability/clinic-time.ts); steps and durations are
 * real minutes from there.
 */
export const SLOT_STEP_MINUTES = 15;
export const MAX_RANGE_DAYS = 31;
const MINUTE_MS = 60_000;

export const AvailableSlot = defineShape(
  'AvailableSlot',
  {
    start: f.key('start', 'String', { description: 'When the slot starts (ISO 8601, UTC).' }),
    end: f.key('end', 'String', {
      description: "When the slot ends: its start plus the appointment type's duration.",
    }),
    provider_id: f.key('provider_id', 'String', { description: 'The provider (prv_…) free then.' }),
    branch_id: f.key('branch_id', 'String', { description: 'The branch (br_…) the slot is at.' }),
  },
  'A free slot: a provider can be booked at a branch for the appointment type from start to end.',
);
const present = presenterFor(AvailableSlot, CORE);

export interface AvailabilityArgs {
  appointment_type_id?: unknown;
  branch_id?: unknown;
  provider_id?: unknown;
  from?: unknown;
  to?: unknown;
}

const WHEN =
  "an ISO 8601 date-time with an offset (2026-12-01T09:00:00+02:00) or a date (2026-12-01: the clinic's midnight starting it)";

type When = { date: string } | { ms: number };

function whenParam(raw: unknown, param: string): When | undefined {
  const r = dateParam(raw, param, WHEN);
  if (!r) return undefined;
  return r.dateOnly ? { date: raw as string } : { ms: r.date.getTime() };
}

function required<T>(value: T | undefined, param: string): T {
  if (value === undefined) throw invalid(param, `${param} is required.`);
  return value;
}

const ENTRY = { fields: ['disabledAt'], joins: {} };
const TYPE = { fields: ['durationMinutes', 'disabledAt'], joins: {} };

/** A catalog entry the query names: unknown, another clinic's or disabled is the same 422 a booking would get. */
async function entryOf(em: EntityManager, entity: any, read: typeof ENTRY, id: number, param: string) {
  const [row] = await readByIds(em, entity, read, [id]);
  if (!row) throw invalid(param, `${param}: no such record at this clinic.`);
  if (row.disabledAt) throw invalid(param, `${param}: that entry is disabled; it cannot be booked.`);
  return row;
}

interface Interval {
  provider: number;
  branch: number;
  weekday: number;
  startMinute: number;
  endMinute: number;
}

/** A provider's active bookings in the range, sorted by start (they never overlap, so by end too). */
type Busy = Map<number, { start: number; end: number }[]>;

export async function listAvailability(ctx: ServiceContext, args: AvailabilityArgs): Promise<Row[]> {
  // Every given parameter's form first, then what is missing, then what they mean together.
  const typeId = idParam(args.appointment_type_id, 'AppointmentType', 'appointment_type_id');
  const branchId = idParam(args.branch_id, 'Branch', 'branch_id');
  const providerId = idParam(args.provider_id, 'Provider', 'provider_id');
  const fromWhen = whenParam(args.from, 'from');
  const toWhen = whenParam(args.to, 'to');
  const type = required(typeId, 'appointment_type_id');
  const fromGiven = required(fromWhen, 'from');
  const toGiven = required(toWhen, 'to');

  const em = readsOf(ctx);
  const [clinic, appointmentType] = await Promise.all([
    readAll(em, Clinic, { fields: ['timezone'], joins: {} }, { id: ctx.principal.clinicId }, []),
    entryOf(em, AppointmentType, TYPE, type, 'appointment_type_id'),
    branchId === undefined ? null : entryOf(em, Branch, ENTRY, branchId, 'branch_id'),
    providerId === undefined ? null : entryOf(em, Provider, ENTRY, providerId, 'provider_id'),
  ]);
  const zone = checkedZone(clinic[0].timezone);
  const at = (w: When) => ('ms' in w ? w.ms : midnightOf(zone, w.date));
  const from = at(fromGiven);
  const to = at(toGiven);
  if (to <= from) throw invalid('to', 'to must be later than from.');
  if (to > plusDays(zone, from, MAX_RANGE_DAYS))
    throw invalid('to', `The range from from to to is at most ${MAX_RANGE_DAYS} days.`);
  const duration = appointmentType.durationMinutes * MINUTE_MS;
  if (!(duration > 0)) throw invalid('appointment_type_id', 'appointment_type_id: the type has no duration.');

  const intervals = await workingIntervals(em, branchId, providerId);
  if (!intervals.length) return [];
  const busy = await bookings(em, [...new Set(intervals.map((i) => i.provider))], from, to + duration);
  const earliest = Math.max(from, ctx.clock.now().getTime());

  const slots: { start: number; provider: number; branch: number }[] = [];
  for (let d: LocalDate = localDateAt(zone, from); instantAt(zone, d, 0) < to; d = nextDate(d)) {
    for (const i of intervals) {
      if (i.weekday !== d.weekday) continue;
      const end = instantAt(zone, d, i.endMinute);
      const own = busy.get(i.provider) ?? [];
      for (
        let t = instantAt(zone, d, i.startMinute);
        t + duration <= end && t < to;
        t += SLOT_STEP_MINUTES * MINUTE_MS
      )
        if (t >= earliest && isFree(own, t, t + duration)) {
          // Computed on the event loop: a bound keeps one clinic's huge answer from stalling others.
          if (slots.length === MAX_SLOTS)
            throw invalid(
              'to',
              `More than ${MAX_SLOTS} free slots between from and to; narrow the range or name provider_id or branch_id.`,
            );
          slots.push({ start: t, provider: i.provider, branch: i.branch });
        }
    }
  }
  slots.sort((a, b) => a.start - b.start || a.provider - b.provider || a.branch - b.branch);
  return slots.map((s) =>
    present(
      {
        start: new Date(s.start).toISOString(),
        end: new Date(s.start + duration).toISOString(),
        provider_id: toId('Provider', s.provider),
        branch_id: toId('Branch', s.branch),
      },
      ctx.principal,
    ),
  );
}

/** At most this many slots in one answer (docs/limits.md); more is a 422 asking for a narrower question. */
export const MAX_SLOTS = 5000;

const INTERVALS = {
  fields: ['provider', 'branch', 'weekday', 'startMinute', 'endMinute'],
  joins: {},
};

/** The intervals of providers and branches still offered (a disabled one has no slots). */
async function workingIntervals(
  em: EntityManager,
  branchId: number | undefined,
  providerId: number | undefined,
): Promise<Interval[]> {
  const where: Record<string, unknown> = {
    provider: providerId === undefined ? { disabledAt: null } : { id: providerId, disabledAt: null },
    branch: branchId === undefined ? { disabledAt: null } : { id: branchId, disabledAt: null },
  };
  const rows = await readAll(em, WorkingHours, INTERVALS, where, []);
  return rows.map((r) => ({
    provider: r.provider.id,
    branch: r.branch.id,
    weekday: r.weekday,
    startMinute: r.startMinute,
    endMinute: r.endMinute,
  }));
}

/**
 * The providers' active appointments overlapping [from, until), at any branch: one statement for
 * the whole range, whatever its length and however many providers.
 */
async function bookings(em: EntityManager, providers: number[], from: number, until: number): Promise<Busy> {
  const rows = await leanFind<Row>(em, Appointment, {
    fields: ['provider', 'startAt', 'endAt'],
    where: { cancelledAt: null, startAt: { $lt: new Date(until) }, endAt: { $gt: new Date(from) } },
    // One array parameter: the same statement for any number of providers.
    whereSql: { sql: 'e.provider_id = any(?::int[])', params: [`{${providers.join(',')}}`] },
    orderBy: [{ startAt: 'asc' }],
  });
  const busy: Busy = new Map();
  for (const r of rows) {
    const list = busy.get(r.provider.id) ?? [];
    list.push({ start: Date.parse(r.startAt), end: Date.parse(r.endAt) });
    busy.set(r.provider.id, list);
  }
  return busy;
}

/** Whether [start, end) overlaps none of `own` (sorted, disjoint): back to back is free. */
function isFree(own: { start: number; end: number }[], start: number, end: number): boolean {
  // The first booking that ends after `start`; only it can reach into the slot first.
  let lo = 0;
  let hi = own.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (own[mid].end <= start) lo = mid + 1;
    else hi = mid;
  }
  return lo === own.length || own[lo].start >= end;
}
