import { allOf } from '../../auth/scopes.ts';
import type { RequestContext } from '../../lib/request-context.ts';
import { AvailableSlot, listAvailability } from '../../services/availability/availability.ts';
import { getWorkingHours, WorkingInterval } from '../../services/availability/working-hours.ts';
import { builder } from '../builder.ts';
import { objectType } from '../resource-types.ts';
import { restList } from '../shared.ts';

/**
 * Working hours and availability (src/services/availability/): bounded lists of values, a plain
 * list in GraphQL and `{data: [...]}` in REST, as catalog lists are. The PUT of working hours is
 * a write definition (src/schema/writes.ts makes its mutation, setWorkingHours).
 */
const Interval = objectType(WorkingInterval);
const Slot = objectType(AvailableSlot);
const catalogRead = allOf(['catalog:read']);
const appointmentsRead = allOf(['appointments:read']);

const hoursDescription =
  "A provider's weekly working intervals (any provider of the clinic, disabled ones too), by weekday then start; times are the clinic's wall-clock times.";
const availabilityDescription =
  "Free slots of an appointment type in [from, to) (at most 31 days): every 15 minutes from each working interval's start, lasting the type's duration_minutes, inside the interval, clear of the provider's active appointments at any branch, not before now. Ordered by start, provider, branch. from/to: ISO 8601 with an offset, or a date (the clinic's midnight).";

builder.queryFields((t) => {
  const slotArgs = (required: boolean) => ({
    appointment_type_id: t.arg.string({ required, description: 'The appointment type (its duration).' }),
    branch_id: t.arg.string({ required: false, description: 'Only slots at this branch.' }),
    provider_id: t.arg.string({ required: false, description: 'Only slots of this provider.' }),
    from: t.arg.string({ required, description: 'Slots starting at or after (inclusive).' }),
    to: t.arg.string({ required, description: 'Slots starting before (exclusive).' }),
  });
  return {
    workingHours: t.field({
      type: [Interval],
      subGraphs: ['Public'],
      // Nullable, like every scope-guarded root field.
      nullable: true,
      authScopes: catalogRead,
      description: `${hoursDescription} An unknown provider is a not_found error.`,
      args: { provider_id: t.arg.id({ required: true }) },
      resolve: (_root: unknown, a: any, ctx: RequestContext) => getWorkingHours(ctx, String(a.provider_id)),
    }),
    getProviderWorkingHours: t.field({
      type: restList('WorkingIntervalList', Interval),
      subGraphs: ['Rest'],
      authScopes: catalogRead,
      description: hoursDescription,
      args: { id: t.arg.string({ required: true }) },
      resolve: async (_root: unknown, a: any, ctx: RequestContext) => ({
        data: await getWorkingHours(ctx, a.id),
      }),
    }),
    availability: t.field({
      type: [Slot],
      subGraphs: ['Public'],
      nullable: true,
      authScopes: appointmentsRead,
      description: availabilityDescription,
      args: slotArgs(true),
      resolve: (_root: unknown, a: any, ctx: RequestContext) => listAvailability(ctx, a),
    }),
    // The required parameters are checked by the service, so a missing one is a 422 naming it.
    listAvailability: t.field({
      type: restList('AvailableSlotList', Slot),
      subGraphs: ['Rest'],
      authScopes: appointmentsRead,
      description: availabilityDescription,
      args: slotArgs(false),
      resolve: async (_root: unknown, a: any, ctx: RequestContext) => ({
        data: await listAvailability(ctx, a),
      }),
    }),
  };
});
