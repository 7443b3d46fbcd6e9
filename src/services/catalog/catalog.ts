import { readAll } from '../../db/list.ts';
import { entityNamed } from '../../entities/index.ts';
import { AppError } from '../../lib/errors.ts';
import { tryParseId } from '../../lib/ids.ts';
import { readsOf, type ServiceContext } from '../../lib/request-context.ts';
import { type Resource, type Row, viewFor } from '../resource.ts';
import { AppointmentStatusItem } from './resources/appointment-status.ts';
import { AppointmentTypeItem } from './resources/appointment-type.ts';
import { BillingAccount } from './resources/billing-account.ts';
import { Branch } from './resources/branch.ts';
import { Breed } from './resources/breed.ts';
import { Measurement } from './resources/measurement.ts';
import { Provider } from './resources/provider.ts';
import { Species } from './resources/species.ts';
import { TreatmentMenuItem } from './resources/treatment-menu-item.ts';
import { Vaccine } from './resources/vaccine.ts';

/**
 * Catalog lists are bounded reference data: every row, no cursor, `{data: [...]}` in REST and a
 * plain list in GraphQL. Ordered by name then id (statuses by their configured order, billing
 * accounts by business name). The veterinary lists answer empty at a dental clinic
 * (docs/decisions.md).
 */
export interface CatalogList {
  /** The GraphQL root field (Public) and the REST field (Rest, routed by src/rest/routes.ts). */
  publicName: string;
  restName: string;
  resource: Resource;
  description: string;
  orderBy: object[];
  veterinaryOnly?: boolean;
  /** Filter arguments (all optional strings) → conditions. */
  filters?: Record<string, { description?: string; where: (value: string) => object }>;
}

const byName = [{ name: 'asc' }, { id: 'asc' }];
const vetNote = ' Veterinary clinics only; empty at a dental clinic.';

export const catalogLists: CatalogList[] = [
  {
    publicName: 'branches',
    restName: 'listBranches',
    resource: Branch,
    description: 'Branches.',
    orderBy: byName,
  },
  {
    publicName: 'appointmentTypes',
    restName: 'listAppointmentTypes',
    resource: AppointmentTypeItem,
    description: 'Appointment types.',
    orderBy: byName,
  },
  {
    publicName: 'appointmentStatuses',
    restName: 'listAppointmentStatuses',
    resource: AppointmentStatusItem,
    description: 'Appointment statuses.',
    orderBy: [{ id: 'asc' }],
  },
  {
    publicName: 'treatmentMenu',
    restName: 'listTreatmentMenu',
    resource: TreatmentMenuItem,
    description: 'The procedure menu.',
    orderBy: byName,
  },
  {
    publicName: 'providers',
    restName: 'listProviders',
    resource: Provider,
    description: 'Providers.',
    orderBy: byName,
  },
  {
    publicName: 'billingAccounts',
    restName: 'listBillingAccounts',
    resource: BillingAccount,
    description: 'Billing accounts.',
    orderBy: [{ businessName: 'asc' }, { id: 'asc' }],
  },
  {
    publicName: 'species',
    restName: 'listSpecies',
    resource: Species,
    description: `Species.${vetNote}`,
    orderBy: byName,
    veterinaryOnly: true,
  },
  {
    publicName: 'breeds',
    restName: 'listBreeds',
    resource: Breed,
    description: `Breeds, optionally of one species.${vetNote}`,
    orderBy: byName,
    veterinaryOnly: true,
    filters: {
      species_id: {
        where: (value) => {
          const n = tryParseId('Species', value);
          if (n == null) {
            throw new AppError('validation_failed', `species_id '${value}' is not a species id.`, {
              param: 'species_id',
            });
          }
          return { species: n };
        },
      },
    },
  },
  {
    publicName: 'vaccines',
    restName: 'listVaccines',
    resource: Vaccine,
    description: `Vaccines.${vetNote}`,
    orderBy: byName,
    veterinaryOnly: true,
  },
  {
    publicName: 'measurements',
    restName: 'listMeasurements',
    resource: Measurement,
    description: `Measurements.${vetNote}`,
    orderBy: byName,
    veterinaryOnly: true,
  },
];

/** Every row of a catalog list, presented. Filter values are checked before anything else. */
export async function listCatalog(
  ctx: ServiceContext,
  list: CatalogList,
  args: Record<string, unknown> = {},
): Promise<Row[]> {
  const where: object[] = [];
  for (const [name, filter] of Object.entries(list.filters ?? {})) {
    const value = args[name];
    if (value != null && value !== '') where.push(filter.where(String(value)));
  }
  if (list.veterinaryOnly && ctx.principal.clinicKind !== 'veterinary') return [];
  const view = viewFor(list.resource);
  const rows = await readAll(
    readsOf(ctx),
    entityNamed(list.resource.kind),
    view.read,
    where.length ? { $and: where } : undefined,
    list.orderBy,
  );
  return rows.map((row) => view.present(row, ctx.principal));
}
