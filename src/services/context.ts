import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/keys.ts';
import type { Clock } from '../lib/clock.ts';

/** What every service call gets: a request-scoped EntityManager (tenant filter set), who asks, and the time. */
export interface ServiceContext {
  em: EntityManager;
  principal: Principal;
  clock: Clock;
}

/** A request-scoped fork with the tenant filter bound to the principal's clinic. */
export function scopedEm(root: EntityManager, clinicId: number): EntityManager {
  const em = root.fork({ clear: true });
  em.setFilterParams('tenant', { clinicId });
  return em;
}
