import { readAll, readByIds } from '../../db/list.ts';
import { entityNamed } from '../../entities/index.ts';
import { AppError, notFound } from '../../lib/errors.ts';
import { tryParseId } from '../../lib/ids.ts';
import { readsOf, type ServiceContext } from '../../lib/request-context.ts';
import { parseResponseFormat } from '../groups-params.ts';
import { type Resource, type Row, restGroups, viewFor } from '../resource.ts';
import { refuseDisabled } from '../write-refs.ts';
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
 * Catalog lists are bounded reference data: every entry still offered (not disabled), no cursor,
 * `{data: [...]}` in REST and a plain list in GraphQL; each entry is also readable by id. Ordered by name then id (statuses by their configured order, billing
 * accounts by business name). The veterinary lists answer empty at a dental clinic
 * (docs/decisions.md).
 */
export interface CatalogList {
  /** The GraphQL root field (Public) and the REST field (Rest, routed by src/rest/routes.ts). */
  publicName: string;
  restName: string;
  /** Under /v1; an entry is at `<path>/{id}`. */
  path: string;
  /** The list's route summary in the OpenAPI document. */
  summary: string;
  /** One entry, in names: getBranch, createBranch, "branch" in messages. */
  noun: string;
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
    summary: 'Branches',
    path: '/catalog/branches',
    noun: 'Branch',
    restName: 'listBranches',
    resource: Branch,
    description: 'Branches.',
    orderBy: byName,
  },
  {
    publicName: 'appointmentTypes',
    summary: 'Appointment types',
    path: '/catalog/appointments/types',
    noun: 'AppointmentType',
    restName: 'listAppointmentTypes',
    resource: AppointmentTypeItem,
    description: 'Appointment types.',
    orderBy: byName,
  },
  {
    publicName: 'appointmentStatuses',
    summary: 'Appointment statuses',
    path: '/catalog/appointments/statuses',
    noun: 'AppointmentStatus',
    restName: 'listAppointmentStatuses',
    resource: AppointmentStatusItem,
    description: 'Appointment statuses.',
    orderBy: [{ id: 'asc' }],
  },
  {
    publicName: 'treatmentMenu',
    summary: 'Treatment menu',
    path: '/catalog/treatments',
    noun: 'TreatmentMenuItem',
    restName: 'listTreatmentMenu',
    resource: TreatmentMenuItem,
    description: 'The procedure menu.',
    orderBy: byName,
  },
  {
    publicName: 'providers',
    summary: 'Providers',
    path: '/catalog/providers',
    noun: 'Provider',
    restName: 'listProviders',
    resource: Provider,
    description: 'Providers.',
    orderBy: byName,
  },
  {
    publicName: 'billingAccounts',
    summary: 'Billing accounts',
    path: '/catalog/billing/accounts',
    noun: 'BillingAccount',
    restName: 'listBillingAccounts',
    resource: BillingAccount,
    description: 'Billing accounts.',
    orderBy: [{ businessName: 'asc' }, { id: 'asc' }],
  },
  {
    publicName: 'species',
    summary: 'Species (veterinary)',
    path: '/catalog/species',
    noun: 'Species',
    restName: 'listSpecies',
    resource: Species,
    description: `Species.${vetNote}`,
    orderBy: byName,
    veterinaryOnly: true,
  },
  {
    publicName: 'breeds',
    summary: 'Breeds (veterinary)',
    path: '/catalog/breeds',
    noun: 'Breed',
    restName: 'listBreeds',
    resource: Breed,
    description: `Breeds, optionally of one species.${vetNote}`,
    orderBy: byName,
    veterinaryOnly: true,
    filters: {
      species_id: {
        description: 'Only the breeds of this species (an id such as spc_1).',
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
    summary: 'Vaccines (veterinary)',
    path: '/catalog/vaccines',
    noun: 'Vaccine',
    restName: 'listVaccines',
    resource: Vaccine,
    description: `Vaccines.${vetNote}`,
    orderBy: byName,
    veterinaryOnly: true,
  },
  {
    publicName: 'measurements',
    summary: 'Measurements (veterinary)',
    path: '/catalog/measurements',
    noun: 'Measurement',
    restName: 'listMeasurements',
    resource: Measurement,
    description: `Measurements.${vetNote}`,
    orderBy: byName,
    veterinaryOnly: true,
  },
];

/** Every entry of a catalog list still offered, presented. Parameters are checked before anything else. */
export async function listCatalog(
  ctx: ServiceContext,
  list: CatalogList,
  args: Record<string, unknown> = {},
): Promise<Row[]> {
  const groups = restGroups(parseResponseFormat(args.response_format), []);
  const where: object[] = [{ disabledAt: null }];
  for (const [name, filter] of Object.entries(list.filters ?? {})) {
    const value = args[name];
    if (value != null && value !== '') where.push(filter.where(String(value)));
  }
  if (list.veterinaryOnly && ctx.principal.clinicKind !== 'veterinary') return [];
  const view = viewFor(list.resource, groups);
  const rows = await readAll(
    readsOf(ctx),
    entityNamed(list.resource.kind),
    view.read,
    { $and: where },
    list.orderBy,
  );
  return rows.map((row) => view.present(row, ctx.principal));
}

/** The detailed format: what a read by id and a write answer. */
export const ENTRY_GROUPS = restGroups(true, []);

/**
 * One entry by id, disabled or not (records written before still name it), in the detailed
 * format. A veterinary list's entry at a dental clinic is a 404, as any unknown id.
 */
export async function getCatalogEntry(ctx: ServiceContext, list: CatalogList, id: string): Promise<Row> {
  const n = tryParseId(list.resource.kind, id);
  const view = viewFor(list.resource, ENTRY_GROUPS);
  const [row] =
    n == null || (list.veterinaryOnly && ctx.principal.clinicKind !== 'veterinary')
      ? [null]
      : await readByIds(readsOf(ctx), entityNamed(list.resource.kind), view.read, [n]);
  if (!row) throw notFound(nounText(list), id);
  return view.present(row, ctx.principal);
}

/** "appointment type", for messages. */
export const nounText = (list: CatalogList) =>
  list.noun.replace(/[A-Z]/g, (c, i) => (i ? ' ' : '') + c.toLowerCase());

// A disabled entry is not named anew by a write (its references check this).
for (const l of catalogLists) refuseDisabled(l.resource.kind);
