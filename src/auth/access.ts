import { EVENT_TYPES, type EventType } from '../events/types.ts';
import type { AppError } from '../lib/errors.ts';
import { GATING_SCOPES, scopeToSee } from './event-scopes.ts';
import { forbidden, type Scope, scopesIn } from './scopes.ts';

/**
 * What a principal may reach, decided here and nowhere else (issue 36). The scopes are declared
 * where the things live: a resource definition's `scopes` (its records), a field's `authScopes`
 * (an operation: `allOf`), an event type's `scopeToSee` (its family). Every transport asks this
 * module: Pothos' scope-auth through the `reach` loader (src/schema/builder.ts), a REST route
 * (src/rest/direct.ts), the first pages of child lists (src/schema/child-pages.ts), the events
 * and webhook services, and the websocket re-check of a changed key. They turn an answer into
 * their own refusal (a 403, a null with an error, a 404, a closed socket) but never compute one,
 * so one change here moves every transport together (test/access.test.ts: its answers and no
 * second reader of a key's scopes; test/access-everywhere.test.ts: every transport follows it).
 */

/** Whose access is decided: a request's principal, or a key as it was and as it is now. */
export interface Holder {
  readonly scopes: ReadonlySet<string>;
}

/** The scopes of `needed` that `who` does not hold, in order, once each: every decision below. */
export function lacking<S extends string>(who: Holder, needed: readonly S[]): S[] {
  const out: S[] = [];
  for (const s of needed) if (!who.scopes.has(s) && !out.includes(s)) out.push(s);
  return out;
}

/** Whether `who` may reach what needs all of `scopes` (a resource's records, a field's `reach`). */
export const mayReach = (who: Holder, scopes: readonly string[]): boolean =>
  lacking(who, scopes).length === 0;

/** The 403 of what needs `needed`, naming the scopes `who` lacks; none when it holds them all. */
export function refusal(who: Holder, needed: readonly string[]): AppError | undefined {
  const missing = lacking(who, needed);
  return missing.length ? forbidden(missing) : undefined;
}

/** The 403 of a field (its `authScopes`: a REST route's Rest field), or none when `who` may run it. */
export const fieldRefusal = (who: Holder, authScopes: unknown): AppError | undefined =>
  refusal(who, scopesIn(authScopes));

/**
 * The 403 of a key whose scopes shrank from `before` to `now` (an open socket's key changed),
 * naming those it lost, as REST would answer it now; none when it lost none.
 */
export const narrowingRefusal = (before: Holder, now: Holder): AppError | undefined =>
  refusal(now, [...before.scopes]);

/** The gating scopes (`GATING_SCOPES`, chat:read) `who` lacks: the outbox rows with them are hidden. */
export const hiddenEventScopes = (who: Holder): string[] => lacking(who, GATING_SCOPES);

const neededToSee = (types: readonly EventType[]): Scope[] =>
  types.map(scopeToSee).filter((s): s is Scope => s !== undefined);

/** Whether `who` may see events of every type of `types` (listed, delivered, sampled). */
export const seesEventTypes = (who: Holder, types: readonly EventType[]): boolean =>
  mayReach(who, neededToSee(types));

/** The event types `who` may see, in the catalog's order. */
export const visibleEventTypes = (who: Holder): EventType[] =>
  EVENT_TYPES.filter((t) => seesEventTypes(who, [t]));

/** The event types `who` may not see (chat.* without chat:read). */
export const hiddenEventTypes = (who: Holder): EventType[] =>
  EVENT_TYPES.filter((t) => !seesEventTypes(who, [t]));

/** The 403 of asking for events of `types` (a filter, a subscription's list) that `who` may not all see. */
export const eventTypesRefusal = (who: Holder, types: readonly EventType[]): AppError | undefined =>
  refusal(who, neededToSee(types));
