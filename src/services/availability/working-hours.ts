import type { EntityManager } from '@mikro-orm/postgresql';
import { readAll, readByIds } from '../../db/list.ts';
import { Provider, WorkingHours } from '../../entities/index.ts';
import { notFound } from '../../lib/errors.ts';
import { tryParseId } from '../../lib/ids.ts';
import { readsOf, type ServiceContext } from '../../lib/request-context.ts';
import {
  CORE,
  defineShape,
  f,
  type PresentContext,
  presenterFor,
  type Resource,
  type Row,
  readPlan,
} from '../resource.ts';

/**
 * A provider's week: weekly intervals at branches, in the clinic's wall-clock time
 * (docs/decisions.md: working hours). Read with GET and replaced whole with PUT
 * /v1/catalog/providers/{id}/working_hours; the availability is computed from them.
 */

/** 'HH:MM' of minutes after local midnight (1440: '24:00', the end of the day). */
export const hhmm = (minutes: number): string =>
  `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;

const times = "a local wall-clock time of the clinic's time zone, HH:MM";

/** One interval: a value of its provider's week, with no id of its own (a PUT replaces them all). */
export const WorkingInterval = defineShape(
  'WorkingInterval',
  {
    branch_id: f.ref('branch', 'Branch', { description: 'The branch (br_…) the provider works at then.' }),
    weekday: f.column('weekday', 'Int', { description: 'ISO weekday: 1 = Monday … 7 = Sunday.' }),
    start: f.column('startMinute', 'String', { convert: hhmm, description: `Start, ${times}.` }),
    end: f.column('endMinute', 'String', {
      convert: hhmm,
      description: `End, ${times}, after start; 24:00 is the end of the day.`,
    }),
  },
  "A provider's weekly working interval at a branch, in the clinic's time zone.",
);

// The shape's columns, as a resource's read plan says them (readPlan only reads `fields`).
const read = readPlan(WorkingInterval as unknown as Resource, Object.keys(WorkingInterval.fields));
const present = presenterFor(WorkingInterval, CORE);
const ORDER = Object.freeze([{ weekday: 'asc' }, { startMinute: 'asc' }]);

/**
 * A provider's intervals, ordered by weekday then start (through a write's transaction too). The
 * week's version is its provider's `updated_at` (a PUT of another week moves it): the array
 * carries it as `updated_at`, which JSON leaves out and the ETag reads (src/services/writes.ts).
 */
export async function readWorkingHours(
  em: EntityManager,
  providerId: number,
  pc: PresentContext,
): Promise<Row[]> {
  const [rows, [provider]] = await Promise.all([
    readAll(em, WorkingHours, read, { provider: providerId }, ORDER as object[]),
    readByIds(em, Provider, VERSION, [providerId]),
  ]);
  return Object.assign(
    rows.map((r) => present(r, pc)),
    { updated_at: provider?.updatedAt },
  );
}

const VERSION = { fields: ['updatedAt'], joins: {} };

/** GET …/providers/{id}/working_hours: the provider's week (disabled providers too); 404 for another clinic's. */
export async function getWorkingHours(ctx: ServiceContext, providerId: string): Promise<Row[]> {
  const n = tryParseId('Provider', providerId);
  const [provider] =
    n == null ? [null] : await readByIds(readsOf(ctx), Provider, { fields: [], joins: {} }, [n]);
  if (!provider || n == null) throw notFound('provider', providerId);
  return readWorkingHours(readsOf(ctx), n, ctx.principal);
}
