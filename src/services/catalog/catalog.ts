import type { EntityManager, FilterQuery } from '@mikro-orm/postgresql';
import {
  AppointmentStatus,
  AppointmentType,
  BillingAccount,
  Branch,
  Breed,
  Measurement,
  Provider,
  Species,
  TreatmentMenuItem,
  Vaccine,
} from '../../entities/index.ts';
import { AppError } from '../../lib/errors.ts';
import { toId, toIdOrNull, tryParseId } from '../../lib/ids.ts';
import type { ServiceContext } from '../context.ts';

/**
 * Catalog lists are bounded reference data: every row, ordered by name then id, no cursor.
 * The veterinary lists at a dental clinic are simply empty (docs/decisions.md).
 */
const byName = { orderBy: [{ name: 'asc' }, { id: 'asc' }] } as const;

const all = <T extends object>(
  em: EntityManager,
  entity: new () => T,
  where: FilterQuery<T> = {},
  order: object = byName,
) => em.find(entity as any, where as any, order as any) as Promise<T[]>;

export async function listBranches(ctx: ServiceContext) {
  const rows = await all(ctx.em, Branch);
  return rows.map((b) => ({
    id: toId('Branch', b.id),
    name: b.name,
    phone: b.phone,
    address: b.address ?? { line1: null, line2: null, city: null, postal_code: null, country: null },
    color: b.color,
  }));
}

export async function listAppointmentTypes(ctx: ServiceContext) {
  const rows = await all(ctx.em, AppointmentType);
  return rows.map((t) => ({
    id: toId('AppointmentType', t.id),
    name: t.name,
    duration_minutes: t.durationMinutes,
    color: t.color,
  }));
}

export async function listAppointmentStatuses(ctx: ServiceContext) {
  const rows = await all(ctx.em, AppointmentStatus, {}, { orderBy: { id: 'asc' } });
  return rows.map((s) => ({
    id: toId('AppointmentStatus', s.id),
    name: s.name,
    color: s.color,
    enabled: s.enabled,
  }));
}

export async function listTreatmentMenu(ctx: ServiceContext) {
  const rows = await all(ctx.em, TreatmentMenuItem);
  return rows.map((t) => ({
    id: toId('TreatmentMenuItem', t.id),
    name: t.name,
    code: t.code,
    price: t.price,
    color: t.color,
    category_id: toIdOrNull('TreatmentCategory', t.category?.id),
  }));
}

export async function listProviders(ctx: ServiceContext) {
  const rows = await all(ctx.em, Provider);
  return rows.map((p) => ({ id: toId('Provider', p.id), name: p.name, type: p.type, color: p.color }));
}

export async function listBillingAccounts(ctx: ServiceContext) {
  const rows = await all(ctx.em, BillingAccount, {}, { orderBy: [{ businessName: 'asc' }, { id: 'asc' }] });
  return rows.map((b) => ({
    id: toId('BillingAccount', b.id),
    business_name: b.businessName,
    business_id: b.businessId,
  }));
}

/** Veterinary reference lists answer empty at a dental clinic, without a query. */
const isVet = (ctx: ServiceContext) => ctx.principal.clinicKind === 'veterinary';

export async function listSpecies(ctx: ServiceContext) {
  if (!isVet(ctx)) return [];
  const rows = await all(ctx.em, Species);
  return rows.map((s) => ({ id: toId('Species', s.id), name: s.name }));
}

export async function listBreeds(ctx: ServiceContext, args: { speciesId?: string | null }) {
  const where: FilterQuery<Breed> = {};
  if (args.speciesId != null && args.speciesId !== '') {
    const n = tryParseId('Species', args.speciesId);
    if (n == null) {
      throw new AppError('validation_failed', `species_id '${args.speciesId}' is not a species id.`, {
        param: 'species_id',
      });
    }
    Object.assign(where, { species: n });
  }
  if (!isVet(ctx)) return [];
  const rows = await all(ctx.em, Breed, where);
  return rows.map((b) => ({
    id: toId('Breed', b.id),
    name: b.name,
    species_id: toIdOrNull('Species', b.species?.id),
  }));
}

export async function listVaccines(ctx: ServiceContext) {
  if (!isVet(ctx)) return [];
  const rows = await all(ctx.em, Vaccine);
  return rows.map((v) => ({
    id: toId('Vaccine', v.id),
    name: v.name,
    code: v.code,
    species_id: toIdOrNull('Species', v.species?.id),
    interval_months: v.intervalMonths,
    next_vaccine_id: toIdOrNull('Vaccine', v.nextVaccine?.id),
    price: v.price,
    batch_required: v.batchRequired,
  }));
}

export async function listMeasurements(ctx: ServiceContext) {
  if (!isVet(ctx)) return [];
  const rows = await all(ctx.em, Measurement);
  return rows.map((m) => ({
    id: toId('Measurement', m.id),
    name: m.name,
    unit: m.unit,
    is_required: m.isRequired,
  }));
}

export type CatalogList<F extends (...a: any[]) => Promise<any[]>> = Awaited<ReturnType<F>>[number];
