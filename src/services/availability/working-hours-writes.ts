import { Branch, Provider as ProviderEntity, WorkingHours } from '../../entities/index.ts';
import { Provider } from '../catalog/resources/provider.ts';
import { clinicRef } from '../clinic-ref.ts';
import { idOf, z } from '../write-input.ts';
import { defineWrite } from '../writes.ts';
import { hhmm, readWorkingHours, WorkingInterval } from './working-hours.ts';

/**
 * PUT /v1/catalog/providers/{id}/working_hours: the provider's whole week, replaced at once
 * (docs/decisions.md: working hours). The body is the GET's answer, `{data: [...]}`, so what was
 * read can be sent back changed; an empty list clears the week.
 */
export const MAX_INTERVALS = 50;
/** Times are on a 5-minute grid: what clinic calendars offer, and slots start on it. */
const GRID_MINUTES = 5;
const DAY_NAMES = ['', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];

/** 'HH:MM' → minutes after midnight; `end` may be 24:00 (the end of the day), `start` not. */
const time = (which: 'start' | 'end') =>
  z
    .string()
    .regex(/^\d{2}:\d{2}$/, 'must be a time HH:MM, e.g. 09:30')
    .meta({
      description:
        which === 'start'
          ? "Local wall-clock time in the clinic's time zone, HH:MM on a 5-minute grid (00:00 to 23:55)."
          : 'Local wall-clock time, HH:MM on a 5-minute grid, after start (00:05 to 24:00, the end of the day).',
    })
    .transform((v, ctx) => {
      const [h, m] = v.split(':').map(Number);
      const minutes = h * 60 + m;
      const max = which === 'start' ? 1439 : 1440;
      if (m > 59 || minutes > max) {
        ctx.addIssue({
          code: 'custom',
          message: `must be a time from 00:00 to ${which === 'start' ? '23:55' : '24:00'}`,
        });
        return z.NEVER;
      }
      if (minutes % GRID_MINUTES) {
        ctx.addIssue({ code: 'custom', message: 'must be on a 5-minute grid (09:00, 09:05, …)' });
        return z.NEVER;
      }
      return minutes;
    });

const interval = z
  .strictObject({
    branch_id: idOf('Branch').meta({ description: 'Where the provider works then; a branch of the clinic.' }),
    weekday: z.number().int().min(1).max(7).meta({ description: 'ISO weekday: 1 = Monday … 7 = Sunday.' }),
    start: time('start'),
    end: time('end'),
  })
  .refine((i) => i.end > i.start, { message: 'must be after start', path: ['end'] });

type Interval = z.output<typeof interval>;

/** A provider is at one place at a time: two intervals of one day may touch, never overlap. */
function noOverlap(list: Interval[], ctx: z.RefinementCtx) {
  const order = list
    .map((_, i) => i)
    .sort((a, b) => {
      const x = list[a];
      const y = list[b];
      return x.weekday - y.weekday || x.start - y.start || a - b;
    });
  for (let k = 1; k < order.length; k++) {
    const prev = list[order[k - 1]];
    const cur = list[order[k]];
    if (cur.weekday === prev.weekday && cur.start < prev.end) {
      ctx.addIssue({
        code: 'custom',
        path: [order[k], 'start'],
        message: `overlaps data[${order[k - 1]}] (${DAY_NAMES[prev.weekday]} ${hhmm(prev.start)}–${hhmm(prev.end)}); a provider's intervals of one day must not overlap, at any branch`,
      });
      return;
    }
  }
}

// By hand: no resource's create or change, but a PUT of a list the provider owns, its rows checked together.
export const setWorkingHoursInput = z.strictObject({
  data: z
    .array(interval)
    .max(MAX_INTERVALS)
    .superRefine(noOverlap)
    .meta({
      description: `The whole week, at most ${MAX_INTERVALS} intervals; [] clears it. Several intervals a day are fine (a lunch break is a gap); they must not overlap.`,
    }),
});

export const setWorkingHours = defineWrite({
  name: 'setWorkingHours',
  method: 'PUT',
  path: '/catalog/providers/:id/working_hours',
  ids: { id: 'Provider' },
  status: 200,
  tag: 'Availability',
  summary: "Replace a provider's working hours",
  description:
    "Replaces the provider's whole week at once (an empty list clears it) and answers it as GET does, ordered by weekday and start. Times are the clinic's wall-clock times. The week's version is the provider's updated_at (the ETag of GET and PUT): If-Match with it refuses a PUT over a week changed since (412). Sending the same week again changes nothing.",
  scopes: ['catalog:write'],
  input: setWorkingHoursInput,
  example: {
    data: [
      { branch_id: 'br_1', weekday: 1, start: '09:00', end: '13:00' },
      { branch_id: 'br_1', weekday: 1, start: '14:00', end: '18:00' },
      { branch_id: 'br_1', weekday: 6, start: '09:00', end: '13:00' },
    ],
  },
  resource: Provider,
  list: { item: WorkingInterval, read: (reader, id) => readWorkingHours(reader.em, id, reader.principal) },
  async run(w, input, id) {
    // Locked: two PUTs of one provider's week take turns, so neither interleaves with the other.
    const provider = await w.load(ProviderEntity, 'Provider', id);
    const branches = new Map<number, Branch>();
    for (const [i, item] of input.data.entries()) {
      if (!branches.has(item.branch_id))
        branches.set(item.branch_id, await w.ref(Branch, item.branch_id, `data[${i}].branch_id`));
    }
    const week = (rows: { branch: number; weekday: number; start: number; end: number }[]) =>
      rows
        .map((r) => `${r.weekday} ${r.start} ${r.end} ${r.branch}`)
        .sort()
        .join(',');
    const before = await w.em.find(WorkingHours, { provider: provider.id });
    const same =
      week(
        before.map((h) => ({
          branch: h.branch.id,
          weekday: h.weekday,
          start: h.startMinute,
          end: h.endMinute,
        })),
      ) ===
      week(input.data.map((i) => ({ branch: i.branch_id, weekday: i.weekday, start: i.start, end: i.end })));
    if (same) return provider.id;
    // The week's version is the provider's: moved forward by this change (versionedTimestamps).
    provider.updatedAt = new Date(Math.max(w.now.getTime(), new Date(provider.updatedAt).getTime() + 1));
    await w.em.nativeDelete(WorkingHours, { provider: provider.id });
    for (const item of input.data)
      w.em.create(WorkingHours, {
        clinic: clinicRef(w),
        provider,
        branch: branches.get(item.branch_id) as Branch,
        weekday: item.weekday,
        startMinute: item.start,
        endMinute: item.end,
      });
    return provider.id;
  },
});
