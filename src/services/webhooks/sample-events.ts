import { scopeToSee } from '../../auth/event-scopes.ts';
import { EVENT_TYPES, type EventType, EventTypeSet } from '../../events/types.ts';
import { valuesOf } from '../../lib/enums.ts';
import { AppError, invalid } from '../../lib/errors.ts';
import { requireTestClinic } from '../clinics/test-mode.ts';
import { EventEnvelope } from '../events/event.resource.ts';
import { eventTypesParam } from '../events/events.ts';
import { f, type Row, type Shape } from '../resource.ts';
import { insertEvents } from '../unit-of-work.ts';
import { text, z } from '../write-input.ts';
import { defineWrite, type WriteContext } from '../writes.ts';
import { enqueueDeliveries } from './delivery-jobs.ts';
import { eventSample } from './sample-data.ts';
import { subscriptionAnswer } from './subscription-answer.ts';
import { subscriptionOf } from './subscription-of.ts';
import { getWebhook, visibleSubscriptions } from './webhooks.ts';

/**
 * Sample events (issue 29): the sample of a type (./sample-data.ts) recorded in the outbox
 * marked `test`, and delivered through the same queue, worker and signing as any event,
 * its envelope carrying `"test": true`. One attempt each (trigger manual: a sample is not retried
 * on the schedule). GET /v1/events, the GraphQL subscription and recover never see a sample
 * (src/services/events/events.ts, relay.ts; delivery-writes.ts); the delivery log shows it.
 *
 * Any clinic may send them today. Test clinics (per-clinic test mode) will be the only ones
 * allowed to trigger samples at every subscription (docs/events.md, Sample events).
 */

/**
 * Records the sample of `type` through the outbox insert of every event, and queues one attempt
 * to each subscription of the clinic it is for by the rule real events are queued by (enabled,
 * not deleted, receiving the type), among those the key sees and, when `only` is given, that
 * one. Answers the event's id and how many were queued.
 */
async function recordSample(w: WriteContext, type: EventType, only?: number) {
  // Only to subscriptions the key sees (the one rule, webhooks.ts): a key without chat:read
  // neither samples nor learns of a subscription that receives chat.* types.
  const visible = visibleSubscriptions(w, 's') ?? { sql: 'true', params: [] };
  const rows = await insertEvents(
    w.em,
    w.clinicId,
    w.now,
    [{ type, scope: scopeToSee(type) ?? '', data: eventSample(type) }],
    {
      among: {
        sql: `(?::int is null or "s"."id" = ?::int) and ${visible.sql}`,
        params: [only ?? null, only ?? null, ...visible.params],
      },
    },
  );
  const subscriptions = rows.map((r) => r.target).filter((s): s is number => s != null);
  await enqueueDeliveries(
    w.em,
    subscriptions.map((subscription) => ({ subscription, event: rows[0].id, attempt: 1, trigger: 'manual' })),
  );
  return { event: rows[0].id, queued: subscriptions.length };
}

const typeInput = valuesOf(EventTypeSet, text(64));

/**
 * What a sample's 202 answers in REST: the envelope as its deliveries carry it, `test: true`
 * included (serializeEnvelope, src/services/events/envelope.ts), so the answer and the delivery
 * are the same object. Not a resource: no read answers a sample.
 */
export const SampleEvent: Shape = {
  name: 'SampleEvent',
  description: "A sample event's envelope, as its deliveries carry it: an event's, and `test: true`.",
  fields: {
    ...EventEnvelope.fields,
    id: f.id({ description: "The event id (evt_…): its delivery's X-Service-Event-Id and webhook-id." }),
    test: f.column('test', 'Boolean', {
      description:
        "Always true: a sample (its data a fixed sample that names no object of the clinic); a receiver acknowledges it and does not act on it. A real event's envelope has no test key.",
    }),
  },
};

/** The answer as the delivery carries it. */
const asSample = (answer: Row): Row => ({ ...answer, test: true });
const subscriptionSeen = subscriptionAnswer({ secret: false });

const SAMPLE_NOTE =
  "Its `data` is a fixed sample of the type's object (docs/events.md, Samples), not one of the clinic: its ids name nothing. The envelope carries `test: true`; the sample is never listed by GET /v1/events nor streamed to GraphQL subscriptions, and shows in the delivery log like any delivery. One attempt, not retried on the schedule.";

export const testWebhook = defineWrite({
  name: 'testWebhook',
  method: 'POST',
  path: '/webhooks/:id/test',
  ids: { id: 'WebhookSubscription' },
  status: 202,
  tag: 'Webhooks',
  summary: 'Send a sample event',
  description: `Delivers a sample event of \`type\` to this subscription only, through the same queue, signing and log as every event. Accepted (202) with the sample's envelope (its id is the X-Service-Event-Id the receiver gets). ${SAMPLE_NOTE} A type the subscription does not receive: 422 (type); a chat.* type on a key without chat:read: 403; a subscription receiving one (or every type) on such a key is out of its sight: 404; a disabled subscription: 409.`,
  scopes: ['webhooks:manage'],
  input: z.strictObject({
    type: typeInput.optional().meta({
      description:
        "The sample's event type; omitted: the first of the subscription's types (patient.created when it receives every type).",
    }),
  }),
  example: { type: 'appointment.created' },
  resource: EventEnvelope,
  ifMatch: false,
  errors: {
    '409': {
      code: 'conflict',
      description: '`conflict`: the subscription is disabled; PATCH it with enabled true, or recover it.',
      message: 'The subscription is disabled; enable it first (PATCH /v1/webhooks/{id} with enabled true).',
    },
  },
  async prepare(ctx, input, id) {
    await getWebhook(ctx, String(id));
    if (input.type) eventTypesParam(ctx, [input.type], 'type');
  },
  async run(w, input, id) {
    const s = await subscriptionOf(w, id);
    if (!s.enabled)
      throw new AppError(
        'conflict',
        'The subscription is disabled; enable it first (PATCH /v1/webhooks/{id} with enabled true).',
      );
    const type = (input.type ?? s.eventTypes[0] ?? EVENT_TYPES[0]) as EventType;
    if (s.eventTypes.length && !s.eventTypes.includes(type))
      throw invalid(
        'type',
        `The subscription does not receive ${type} (its event_types: ${s.eventTypes.join(', ')}); change them first (PATCH /v1/webhooks/{id}).`,
      );
    return (await recordSample(w, type, s.id)).event;
  },
  shown: async (ctx, answer, id) => asSample(await subscriptionSeen(ctx, answer, id)),
  restShape: SampleEvent,
});

export const triggerEvent = defineWrite({
  name: 'triggerEvent',
  method: 'POST',
  path: '/events',
  status: 202,
  tag: 'Events',
  summary: 'Trigger a sample event',
  description: `Test clinics only (a live clinic's key: 403 \`test_mode_only\`). Delivers a sample event of \`type\` to every enabled subscription of the clinic that receives the type, as a real event of that type would be (\`cli events trigger <type>\` calls this). Accepted (202) with the sample's envelope. ${SAMPLE_NOTE} Only subscriptions the key sees receive it (none receiving a chat.* type, or every type, for a key without chat:read). No such enabled subscription receives the type: 409. A chat.* type on a key without chat:read: 403.`,
  scopes: ['webhooks:manage'],
  input: z.strictObject({
    type: typeInput.meta({ description: "The sample's event type." }),
  }),
  example: { type: 'patient.created' },
  resource: EventEnvelope,
  errors: {
    '403': {
      code: 'test_mode_only',
      description:
        "`test_mode_only`: the key's clinic is live; sample events on demand are for test clinics (docs/test-mode.md). `forbidden`: the key lacks `webhooks:manage`, or `chat:read` for a chat.* type; `required_scopes` names them.",
      message:
        "POST /v1/events is for test clinics only, and this clinic is live (its keys start cg_live_). Use a test clinic's key (cg_test_…); docs/test-mode.md.",
    },
    '409': {
      code: 'conflict',
      description:
        '`conflict`: no enabled subscription of the clinic that the key sees receives the type; nothing would be delivered.',
      message: 'No enabled webhook subscription of this clinic receives patient.created; nothing was sent.',
    },
  },
  async prepare(ctx, input) {
    requireTestClinic(ctx.principal.clinicMode, 'POST /v1/events');
    eventTypesParam(ctx, [input.type], 'type');
  },
  async run(w, input) {
    const type = input.type as EventType;
    const { event, queued } = await recordSample(w, type);
    // Rolled back with the write: no sample stays in the outbox for no one.
    if (!queued)
      throw new AppError(
        'conflict',
        `No enabled webhook subscription of this clinic receives ${type}; nothing was sent.`,
      );
    return event;
  },
  shown: async (_ctx, answer) => asSample(answer),
  restShape: SampleEvent,
});
