import type { EntityManager } from '@mikro-orm/postgresql';
import { Branch, Provider } from '../entities/catalog.ts';
import type { Clinic } from '../entities/clinic.ts';
import { WorkingHours } from '../entities/working-hours.ts';

/**
 * Demo working hours for every provider of a clinic, so GET /v1/availability has something to
 * compute. The demo clinics are in Israel, whose working week is Sunday to Thursday (ISO 7, 1–4),
 * with Friday mornings for some; a lunch break is a gap between two intervals. Providers take
 * the patterns in turn, some splitting their week between the two branches.
 */
const SUN_THU = [7, 1, 2, 3, 4];
const at = (h: number, m = 0) => h * 60 + m;

type Day = { weekday: number; branch: 0 | 1; from: number; to: number };

const split = (
  days: number[],
  branch: 0 | 1,
  from = at(9),
  lunch = at(13),
  back = at(14),
  to = at(18),
): Day[] =>
  days.flatMap((weekday) => [
    { weekday, branch, from, to: lunch },
    { weekday, branch, from: back, to },
  ]);

const patterns: Day[][] = [
  // Full days at the main branch, and a Friday morning.
  [...split(SUN_THU, 0), { weekday: 5, branch: 0, from: at(8), to: at(12) }],
  // The week split between the branches.
  [...split([7, 1, 3], 0), ...split([2, 4], 1)],
  // Two long days at the second branch.
  split([1, 3], 1, at(10), at(13), at(14), at(19)),
  // Mornings without a break.
  SUN_THU.map((weekday) => ({ weekday, branch: 0, from: at(8), to: at(14) })),
  // Afternoons at the second branch, until the evening.
  SUN_THU.map((weekday) => ({ weekday, branch: 1, from: at(12), to: at(19, 30) })),
];

/** The ISO weekdays the clinic's first provider (prv_1 in the demo) works: the start banner's availability example. */
export const firstProviderWorkdays: ReadonlySet<number> = new Set(patterns[0].map((d) => d.weekday));

export async function seedWorkingHours(em: EntityManager, clinic: Clinic): Promise<void> {
  const [providers, branches] = await Promise.all([
    // The seed's transaction is bound to no clinic: the condition names it instead of the filter.
    em.find(Provider, { clinic }, { orderBy: { id: 'asc' }, filters: false }),
    em.find(Branch, { clinic }, { orderBy: { id: 'asc' }, filters: false }),
  ]);
  if (!branches.length) return;
  providers.forEach((provider, i) => {
    for (const d of patterns[i % patterns.length])
      em.create(WorkingHours, {
        clinic,
        provider,
        branch: branches[d.branch] ?? branches[0],
        weekday: d.weekday,
        startMinute: d.from,
        endMinute: d.to,
      });
  });
  await em.flush();
}
