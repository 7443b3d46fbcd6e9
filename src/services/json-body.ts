import { AppError } from '../lib/errors.ts';

/**
 * The one check of a write's JSON body: an object with only the fields it takes (an unknown one
 * is a 422 naming it, so a misspelt field is never silently ignored). `prefix` names a nested
 * object's fields (`media.type`).
 */
export function jsonObject(
  value: unknown,
  allowed: readonly string[],
  param = 'body',
  prefix = '',
): Record<string, unknown> {
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw new AppError(
      'validation_failed',
      `${param === 'body' ? 'The body' : param} must be a JSON object {${allowed.join(', ')}}.`,
      { param },
    );
  const extra = Object.keys(value).filter((k) => !allowed.includes(k));
  if (extra.length)
    throw new AppError(
      'validation_failed',
      `Unknown field ${prefix}${extra[0]}. Allowed: ${allowed.map((a) => prefix + a).join(', ')}.`,
      { param: `${prefix}${extra[0]}` },
    );
  return value as Record<string, unknown>;
}
