/**
 * The inbox's client of the public API: queries and the reply over POST /graphql, the live part
 * over graphql-ws (its browser build, the global `graphqlWs`, loaded before the modules) with the
 * reading key in `connection_init`.
 */

import { ApiError, gql } from './gql.js';

const http = new URL('/graphql', location.href).href;
const ws = http.replace(/^http/, 'ws');

export const CONVERSATION = `id displayName patientPhone lastMessagePreview lastActivityAt lastInboundAt
  lastOutboundAt isHandled freeTextWindowExpiresAt updatedAt patients { firstName lastName }`;
export const MESSAGE = `id conversationId direction type status text createdAt updatedAt failureReason
  template media { available type }`;
/** A signed link, valid hours: read with the thread, and for a media message that arrives live. */
export const MEDIA_LINK = 'mediaLink { url }';

export { ApiError, gql };

/** What to tell the person about a refused reading key, or null when the error is another. */
export function readKeyProblem(e) {
  if (e.code === 'unauthenticated')
    return 'The reading key was refused: it is unknown, mistyped or revoked. Paste a current chat:read key.';
  if (e.code === 'forbidden')
    return 'The reading key has no chat:read scope (a chat:write key goes in the second field). Paste a chat:read key.';
  return null;
}

/** The live connection: retried for good, except a refused key (4403), said at once instead. */
export function liveClient(readKey, on) {
  return graphqlWs.createClient({
    url: ws,
    connectionParams: { Authorization: `Bearer ${readKey}` },
    retryAttempts: Number.POSITIVE_INFINITY,
    shouldRetry: (e) => !(e && e.code === 4403),
    retryWait: (retries) => new Promise((r) => setTimeout(r, Math.min(10_000, 500 * 2 ** retries))),
    on,
  });
}

/** Runs a subscription; answers the function that ends it. */
export function subscribe(client, query, variables, onData, onError) {
  return client.subscribe(
    { query, variables },
    {
      next: (result) => {
        if (result.errors?.length) return onError(result.errors[0]);
        onData(result.data);
      },
      error: onError,
      complete: () => {},
    },
  );
}

/** What a 4403 close says: its reason is REST's refusal, `code: message` (src/server/close-reason.ts). */
export function liveRefusal(reason, keyWorked) {
  const [, code, message] = /^(\w+): (.*)$/s.exec(reason ?? '') ?? [];
  if (code === 'unauthenticated' && keyWorked)
    return 'The reading key was revoked: the inbox stopped updating. Paste a current chat:read key.';
  if (code === 'forbidden')
    return `The reading key lost a scope: ${message} The inbox stopped updating; paste a current chat:read key.`;
  return `The server refused the reading key on the live connection: ${message ?? reason ?? 'Forbidden'}`;
}
