import { allOf } from '../../auth/scopes.ts';
import type { RequestContext } from '../../lib/request-context.ts';
import { AvailableSlot, listAvailability } from '../../services/availability/availability.ts';
import { getWorkingHours, WorkingInterval } from '../../services/availability/working-hours.ts';
import { builder } from '../builder.ts';
import { argsOn, type Face, nameOn, withServiceArgs } from '../face-args.ts';
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
/** Names the appointment type's duration field as `face` does. */
const availabilityDescription = (face: Face) =>
  `Free slots of an appointment type in [from, to) (at most 31 days): every 15 minutes from each working interval's start, lasting the type's ${nameOn(face, 'duration_minutes')}, inside the interval, clear of the provider's active appointments at any branch, not before now. Ordered by start, provider, branch. from/to: ISO 8601 with an offset, or a date (the clinic's midnight).`;

builder.queryFields((t) => {
  const slotArgs = (face: Face, required: boolean) =>
    argsOn(face, {
      appointment_type_id: t.arg.string({
        required,
        description: 'The appointment type (an id such as apt_1): slots last its duration.',
      }),
      branch_id: t.arg.string({ required: false, description: 'Only slots at this branch (br_…).' }),
      provider_id: t.arg.string({ required: false, description: 'Only slots of this provider (prv_…).' }),
      from: t.arg.string({ required, description: 'Slots starting at or after this time (inclusive).' }),
      to: t.arg.string({
        required,
        description: 'Slots starting before this time (exclusive), at most 31 days after from.',
      }),
    });
  return {
    workingHours: t.field({
      type: [Interval],
      subGraphs: ['Public'],
      // Nullable, like every scope-guarded root field.
      nullable: true,
      authScopes: catalogRead,
      description: `${hoursDescription} An unknown provider is a not_found error.`,
      args: { providerId: t.arg.id({ required: true, description: 'The provider (prv_…).' }) },
      resolve: (_root: unknown, a: any, ctx: RequestContext) =>
        withServiceArgs(a, (args) => getWorkingHours(ctx, String(args.provider_id))),
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
      description: availabilityDescription('Public'),
      args: slotArgs('Public', true),
      resolve: (_root: unknown, a: any, ctx: RequestContext) =>
        withServiceArgs(a, (args) => listAvailability(ctx, args)),
    }),
    // The required parameters are checked by the service, so a missing one is a 422 naming it.
    listAvailability: t.field({
      type: restList('AvailableSlotList', Slot),
      subGraphs: ['Rest'],
      authScopes: appointmentsRead,
      description: availabilityDescription('Rest'),
      args: slotArgs('Rest', false),
      resolve: async (_root: unknown, a: any, ctx: RequestContext) => ({
        data: await listAvailability(ctx, a),
      }),
    }),
  };
});
