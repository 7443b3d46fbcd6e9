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

/**
 * The timestamps of records the API writes (patients, appointments, treatments, payments, calls,
 * catalog entries): `updated_at` moves forward by at least a millisecond on every change, so it
 * is the version an ETag names (docs/decisions.md: If-Match) even for two changes within one
 * millisecond or a clock that stands still (tests).
 */
export const versionedTimestamps = () => ({
  createdAt: p.datetime().onCreate(() => clockNow()),
  updatedAt: p
    .datetime()
    .onCreate(() => clockNow())
    .onUpdate((entity: { updatedAt?: Date | null }) => {
      const now = clockNow();
      const last = entity.updatedAt ? new Date(entity.updatedAt).getTime() : 0;
      return now.getTime() > last ? now : new Date(last + 1);
    }),
});

export interface Address {
  line1: string | null;
  line2: string | null;
  city: string | null;
  postal_code: string | null;
  country: string | null;
}
