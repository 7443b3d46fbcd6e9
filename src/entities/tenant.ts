import { p } from '@mikro-orm/core';
import { Clinic } from './clinic.ts';

/**
 * Columns every tenant-owned row has. The `tenant` filter (mikro-orm.config.ts) adds
 * `clinic = :clinicId` to every query on these entities.
 */
export const tenantColumns = () => ({
  id: p.integer().primary().autoincrement(),
  clinic: () => p.manyToOne(Clinic).index(),
});

export const timestamps = () => ({
  createdAt: p.datetime().onCreate(() => new Date()),
  updatedAt: p
    .datetime()
    .onCreate(() => new Date())
    .onUpdate(() => new Date()),
});

export interface Address {
  line1: string | null;
  line2: string | null;
  city: string | null;
  postal_code: string | null;
  country: string | null;
}
