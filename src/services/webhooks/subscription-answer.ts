import { readByIds } from '../../db/list.ts';
import { WebhookSubscription as Entity } from '../../entities/index.ts';
import { notFound } from '../../lib/errors.ts';
import { tryParseId } from '../../lib/ids.ts';
import { type RequestContext, readsOf } from '../../lib/request-context.ts';
import type { Row } from '../resource.ts';
import { maskSecret } from './webhook.resource.ts';
import { assertSeesSubscription } from './webhooks.ts';

/** What the answer is judged against: the subscription as it is now, deleted or not. */
const now = Object.freeze({
  fields: Object.freeze(['id', 'secret', 'eventTypes', 'deletedAt', 'previousSecretExpiresAt']),
  joins: Object.freeze({}),
});

const timeOf = (v: unknown): number | null => (v == null ? null : new Date(v as string).getTime());

/**
 * Whether the secret the answer names (masked: its last four characters) is still the
 * subscription's current one, the one this answer's write made. Every rotation sets
 * `previous_secret_expires_at` to its own time plus the overlap, so a creation's secret is current
 * while it is null, and a rotation's while it is that rotation's; the last four characters also
 * differ between two secrets but once in 64^4.
 */
function stillIssued(answer: Row, s: Row): boolean {
  return (
    answer.secret === maskSecret(String(s.secret)) &&
    timeOf(answer.previous_secret_expires_at) === timeOf(s.previousSecretExpiresAt)
  );
}

/**
 * What a write about a webhook subscription answers (`WriteOperation.shown`), judged as it is sent,
 * the first time and on an Idempotency-Key replay alike (issue 34; docs/events.md, What a replay
 * answers). The subscription is read as it is now: one the key may not see now (a chat key widened
 * it to chat.* since) is a 404, as any request naming it is (`seesSubscription`); a deleted one
 * answers as it was. With `secret`, the creation's and a rotation's answer, the secret is whole
 * only while it is still the one this write made: after a later rotation (by any key) or a
 * DELETE, the answer keeps it masked. A replay never shows a secret newer than its write's, and
 * the idempotency store keeps none.
 */
export function subscriptionAnswer(opts: { secret: boolean }) {
  return async (ctx: RequestContext, answer: Row, pathId: string | undefined): Promise<Row> => {
    const id = pathId ?? String(answer.id);
    const n = tryParseId('WebhookSubscription', id);
    const [s] = n == null ? [null] : await readByIds(readsOf(ctx), Entity, now, [n]);
    if (!s) throw notFound('webhook subscription', id);
    assertSeesSubscription(ctx, s as { eventTypes: string[] }, id);
    if (!opts.secret || s.deletedAt != null || !stillIssued(answer, s)) return answer;
    return { ...answer, secret: s.secret };
  };
}
