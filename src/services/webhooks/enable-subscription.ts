import type { WebhookSubscription as Entity } from '../../entities/index.ts';
import type { WriteContext } from '../writes.ts';

/**
 * Enables a disabled subscription in the write's transaction: the one way back, taken by
 * POST /v1/webhooks/{id}/recover and by PATCH with `enabled: true`. Its failure streak starts
 * again. Answers whether it was disabled.
 */
export async function enableSubscription(w: WriteContext, s: Entity): Promise<boolean> {
  if (s.enabled) return false;
  s.enabled = true;
  s.disabledAt = null;
  s.disabledReason = null;
  s.failingSince = null;
  s.consecutiveFailures = 0;
  await w.em.flush();
  // A write under way may have read the subscription as disabled (queuing it nothing) and not
  // committed its event yet, which a recover's query would then miss for ever. The outbox is
  // held still until this commits: writes in flight are waited for (their events are seen
  // by a recover), and a write that starts meanwhile waits, then reads the subscription enabled.
  // Every clinic's writes wait as long as this takes: only a re-enabling write does it.
  await w.em
    .getConnection()
    .execute('lock table "event" in share mode', [], 'run', w.em.getTransactionContext());
  return true;
}
