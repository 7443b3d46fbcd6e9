import { p } from '@mikro-orm/core';
import { clockNow } from '../lib/request-context.ts';
import { Clinic } from './clinic.ts';

/**
 * Columns every tenant-owned row has. The `tenant` filter (mikro-orm.config.ts) adds
 * `clinic = :clinicId` to every query on these entities.
 */
export const tenantColumns = () => ({
  id: p.integer().primary().autoincrement(),
  clinic: () => p.manyToOne(Clinic).index(),
});

/** Set from the request's clock (injected in tests), the system's outside a request. */
export const timestamps = () => ({
  createdAt: p.datetime().onCreate(() => clockNow()),
  updatedAt: p
    .datetime()
    .onCreate(() => clockNow())
    .onUpdate(() => clockNow()),
});

export interface Address {
  line1: string | null;
  line2: string | null;
  city: string | null;
  postal_code: string | null;
  country: string | null;
}
