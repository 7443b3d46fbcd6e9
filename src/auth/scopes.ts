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

/** Every scope named in a field's authScopes (`{'a': true}` or `{$all: {...}}`), in order, once each. */
export function scopesIn(authScopes: unknown, out: string[] = []): string[] {
  if (!authScopes || typeof authScopes !== 'object') return out;
  for (const [k, v] of Object.entries(authScopes)) {
    if (k.startsWith('$')) scopesIn(v, out);
    else if (v === true && !out.includes(k)) out.push(k);
  }
  return out;
}

/** The authScopes of a field that needs all of `scopes`. */
export const allOf = (scopes: readonly string[]) =>
  scopes.length === 1
    ? ({ [scopes[0]]: true } as Record<Scope, boolean>)
    : ({ $all: Object.fromEntries(scopes.map((s) => [s, true])) } as any);

/**
 * The scopes of a field's `authScopes` (the one declaration of what a field needs) that a key
 * lacks. Pothos' scope-auth checks GraphQL fields with it; GET routes (src/rest/direct.ts) the
 * Rest field of the route, without an execution.
 */
export const lackingScopes = (authScopes: unknown, granted: ReadonlySet<string>): string[] =>
  scopesIn(authScopes).filter((s) => !granted.has(s));

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
