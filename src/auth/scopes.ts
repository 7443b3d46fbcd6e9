import { AppError } from '../lib/errors.ts';

/**
 * The spec's scopes, and beside them the writes' (issue 16: named the same way) and calls:read
 * for the top-level calls reads the spec leaves open (docs/decisions.md).
 */
export const allScopes = [
  'patients:read',
  'appointments:read',
  'treatments:read',
  'payments:read',
  'catalog:read',
  'vaccines:read',
  'measurements:read',
  'patients:write',
  'appointments:write',
  'treatments:write',
  'payments:write',
  'calls:read',
  'calls:write',
  'catalog:write',
  'chat:read',
  'chat:write',
  'webhooks:manage',
] as const;

export type Scope = (typeof allScopes)[number];

export const readScopes: Scope[] = allScopes.filter((s) => s.endsWith(':read'));

/** The clinic-record writes (chat:write stays apart: never beside chat:read). */
export const writeScopes: Scope[] = allScopes.filter((s) => s.endsWith(':write') && s !== 'chat:write');

export function isScope(s: string): s is Scope {
  return (allScopes as readonly string[]).includes(s);
}

/** Validates a requested scope list; chat:read and chat:write are never granted together. */
export function validateScopes(scopes: string[]): Scope[] {
  if (scopes.length === 0)
    throw new AppError('validation_failed', 'A key needs at least one scope.', { param: 'scopes' });
  const unknown = scopes.filter((s) => !isScope(s));
  if (unknown.length) {
    throw new AppError(
      'validation_failed',
      `Unknown scope(s): ${unknown.join(', ')}. Known: ${allScopes.join(', ')}.`,
      {
        param: 'scopes',
      },
    );
  }
  if (scopes.includes('chat:read') && scopes.includes('chat:write')) {
    throw new AppError('validation_failed', 'chat:read and chat:write cannot be granted on the same key.', {
      param: 'scopes',
    });
  }
  return [...new Set(scopes)] as Scope[];
}

/**
 * How a field declares what it needs (its `authScopes`): every scope of `scopes`, as one
 * parameter of Pothos' `reach` scope loader, which asks src/auth/access.ts (the one decision).
 * Frozen and made once per field, so Pothos' per-request cache answers a field's repeats (a
 * patient's `appointments` on every item of a page) with one decision.
 */
export const allOf = (scopes: readonly Scope[]): FieldScopes => ({ reach: Object.freeze([...scopes]) });

/** A field's `authScopes` as `allOf` makes them. */
export interface FieldScopes {
  reach: readonly Scope[];
}

/** Every scope a field's `authScopes` names, in order, once each (docs, the 403s, tests). */
export function scopesIn(authScopes: unknown): Scope[] {
  const reach = (authScopes as Partial<FieldScopes> | null | undefined)?.reach;
  return Array.isArray(reach) ? [...new Set(reach)] : [];
}

/** The 403 of a key without the scopes a field needs, naming them. */
export function forbidden(scopes: readonly string[]): AppError {
  return new AppError(
    'forbidden',
    scopes.length
      ? `This API key lacks the scope required here: ${scopes.join(', ')}.`
      : 'This API key is not allowed to do this.',
    { details: { required_scopes: [...scopes] } },
  );
}
