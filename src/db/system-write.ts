import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * The write of what is no clinic's data, beside the unit of work of a clinic's writes
 * (src/services/unit-of-work.ts, `clinicWrite`): the operator's clinics and API keys (the CLI),
 * the media store's bytes. Whatever `work` changes is flushed and committed in one transaction
 * (inside the caller's, when it holds one: the demo seed's). No event is recorded (the catalog has
 * none for these) and nothing is counted as a request's committed write: a request that only
 * stored bytes keeps its Idempotency-Key free for the retry.
 *
 * Below the services on purpose: the auth and media layers write through it too.
 */
export function systemWrite<T>(em: EntityManager, work: (tx: EntityManager) => Promise<T>): Promise<T> {
  // MikroORM flushes what `work` changed before the commit (a nested call: its savepoint's release).
  return em.transactional(work);
}
