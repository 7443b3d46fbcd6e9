/**
 * The portal's client of the public API: GraphQL over POST /graphql with the pasted key, the
 * event catalog by introspection of the `EventType` enum, and the samples from the OpenAPI
 * document's `webhooks` entries (/v1/openapi.json). Nothing else.
 */

import { ApiError, gql } from './gql.js';

export const ENDPOINT = `id url eventTypes description enabled secret previousSecretExpiresAt disabledAt
  disabledReason failureStreak failingSince createdAt updatedAt`;
export const DELIVERY = `id trigger status attempt attemptedAt responseStatus durationMs responseExcerpt error
  nextAttemptAt event { id type }`;

export { ApiError, gql };

/** What to tell the person about a refused key, or null when the error is another. */
export function keyProblem(e) {
  if (e.code === 'unauthenticated')
    return 'The key was refused: it is unknown, mistyped or revoked. Paste a current key with webhooks:manage.';
  if (e.code === 'forbidden') return 'The key has no webhooks:manage scope. Paste a key that has it.';
  return null;
}

/** `CHAT_MESSAGE_SENT` stands for `chat.message.sent` (the EventType enum's rule). */
export const typeName = (value) => value.toLowerCase().replaceAll('_', '.');
export const enumValue = (type) => type.toUpperCase().replaceAll('.', '_');

/** The event catalog: every type and what it means, in the schema's order. */
export async function loadCatalog() {
  const data = await gql(
    'query PortalCatalog { __type(name: "EventType") { enumValues { name description } } }',
  );
  return data.__type.enumValues.map((v) => ({ type: typeName(v.name), description: v.description ?? '' }));
}

let samples;
/** Each type's sample envelope, the example of its delivery in the OpenAPI document (read once). */
export function loadSamples() {
  samples ??= fetch(new URL('/v1/openapi.json', location.href))
    .then((r) => {
      if (!r.ok) throw new Error(`HTTP ${r.status}`);
      return r.json();
    })
    .then((doc) => {
      const out = new Map();
      for (const [type, entry] of Object.entries(doc.webhooks ?? {}))
        out.set(type, entry.post?.requestBody?.content?.['application/json']?.example);
      return out;
    })
    .catch((e) => {
      samples = undefined;
      throw new ApiError(`The samples could not be read from /v1/openapi.json (${e.message}).`, 'network');
    });
  return samples;
}

/** A random idempotency key: the same action sent again after a lost answer happens once. */
export const randomKey = () =>
  [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, '0')).join('');
