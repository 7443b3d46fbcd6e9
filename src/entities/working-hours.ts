import { defineEntity, p } from '@mikro-orm/core';
import { Branch, Provider } from './catalog.ts';
import { tenantColumns } from './tenant.ts';

/**
 * One weekly working interval of a provider at a branch: on ISO weekday `weekday` (1 = Monday …
 * 7 = Sunday), from `startMinute` to `endMinute`, minutes after local midnight in the clinic's
 * time zone (1440: the end of the day). Wall-clock times, not instants: the availability turns
 * them into instants per date, so 09:00 stays 09:00 across a daylight-saving change. A provider's
 * intervals of one day never overlap (exclusion constraint `working_hours_no_overlap`).
 */
const WorkingHoursSchema = defineEntity({
  name: 'WorkingHours',
  tableName: 'working_hours',
  // As the migration has them (the exclusion constraint lives there only, as appointment_no_overlap does).
  checks: [
    { name: 'working_hours_weekday_check', expression: '"weekday" >= 1 and "weekday" <= 7' },
    {
      name: 'working_hours_minutes_check',
      expression: '"start_minute" >= 0 and "start_minute" < "end_minute" and "end_minute" <= 1440',
    },
  ],
  properties: {
    ...tenantColumns(),
    provider: () => p.manyToOne(Provider),
    branch: () => p.manyToOne(Branch),
    weekday: p.integer(),
    startMinute: p.integer(),
    endMinute: p.integer(),
  },
});
export class WorkingHours extends WorkingHoursSchema.class {}
WorkingHoursSchema.setClass(WorkingHours);
