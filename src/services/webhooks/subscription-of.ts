import { WebhookSubscription as Entity } from '../../entities/index.ts';
import { notFound } from '../../lib/errors.ts';
import type { WriteContext } from '../writes.ts';
import { assertSeesSubscription } from './webhooks.ts';

/**
 * The subscription a write on `/webhooks/{id}/…` acts on, locked in the write's transaction
 * (WriteContext.load); a deleted one is a 404, as an unknown one, and so is one out of the key's
 * sight (`seesSubscription`, judged on the locked row): every write on a subscription reads it
 * this one way.
 */
export async function subscriptionOf(w: WriteContext, id: string | undefined): Promise<Entity> {
  const s = await w.load(Entity, 'WebhookSubscription', id);
  if (s.deletedAt) throw notFound('webhook subscription', String(id));
  assertSeesSubscription(w, s, String(id));
  return s;
}
