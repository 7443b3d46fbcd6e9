import { z } from 'zod';
import { messageTypes } from '../entities/index.ts';
import type { NetworkCallback } from './adapter.ts';

/**
 * The callback payloads of adapter.ts, checked before anything is recorded. Every bound is at
 * most its column's (test/callback.test.ts sends each field at its longest), so a payload that
 * passes is stored, never a 500 the network would retry for a day.
 */
const phone = z.string().regex(/^\+[1-9]\d{6,14}$/, 'an E.164 phone number');
const id = z.string().min(1).max(200);
const at = z.iso.datetime({ offset: true });
const media = z.object({ url: z.url(), mime_type: z.string().min(1).max(200) }).nullable();

const schema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('message.inbound'),
    network_message_id: id,
    clinic_phone: phone,
    from: phone,
    profile_name: z.string().max(200).nullable(),
    message_type: z.enum(messageTypes),
    text: z.string().max(65_536).nullable(),
    media,
    contacts: z.array(z.unknown()).nullable(),
    reply_to_network_message_id: id.nullable(),
    at,
  }),
  z.object({
    type: z.literal('message.echo'),
    network_message_id: id,
    clinic_phone: phone,
    to: phone,
    message_type: z.enum(messageTypes),
    text: z.string().max(65_536).nullable(),
    media,
    at,
  }),
  z.object({
    type: z.literal('reaction'),
    network_message_id: id,
    clinic_phone: phone,
    from: phone,
    emoji: z.string().min(1).max(64).nullable(),
    at,
  }),
  z.object({
    type: z.literal('receipt'),
    network_message_id: id,
    /** Which clinic's message: a network id is looked up within its clinic only. */
    clinic_phone: phone,
    status: z.enum(['sent', 'delivered', 'read', 'failed']),
    failure_reason: z.string().max(1000).nullable(),
    at,
  }),
]);

/**
 * How far in the future an event's `at` may be (clock skew between the network and the service):
 * a later one would pin its conversation to the top of the list and keep its window open.
 */
export const MAX_CLOCK_SKEW_MS = 5 * 60_000;

/** The payload, or a message saying what is wrong with it. */
export function parseCallback(
  body: unknown,
  now: Date,
): { ok: true; event: NetworkCallback } | { ok: false; message: string } {
  const r = schema.safeParse(body);
  if (!r.success) {
    const issue = r.error.issues[0];
    return { ok: false, message: `${issue.path.join('.') || 'body'}: ${issue.message}` };
  }
  if (Date.parse(r.data.at) > now.getTime() + MAX_CLOCK_SKEW_MS)
    return {
      ok: false,
      message: `at: ${r.data.at} is more than ${MAX_CLOCK_SKEW_MS / 60_000} minutes after the service's time (${now.toISOString()}).`,
    };
  return { ok: true, event: r.data as NetworkCallback };
}
