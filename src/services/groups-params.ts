import { AppError } from '../lib/errors.ts';
import { type Groups, restGroups } from './resource.ts';

/**
 * The REST parameters that choose a resource's groups: `response_format=detailed` and
 * `include=owner,species` (a comma list, or repeated values). Unknown values are a 422.
 */
export function parseInclude(raw: unknown, known: readonly string[]): string[] {
  const values = (Array.isArray(raw) ? raw : raw == null ? [] : [raw])
    .flatMap((v) => String(v).split(','))
    .map((v) => v.trim())
    .filter(Boolean);
  const unknown = values.filter((v) => !known.includes(v));
  if (unknown.length) {
    throw new AppError(
      'validation_failed',
      `Unknown include value(s): ${unknown.join(', ')}. Allowed: ${known.join(', ')}.`,
      { param: 'include' },
    );
  }
  return [...new Set(values)];
}

/** The values of `response_format` (the OpenAPI enum too). */
export const RESPONSE_FORMATS = ['concise', 'detailed'] as const;

export function parseResponseFormat(raw: unknown): boolean {
  if (raw == null || raw === '' || raw === RESPONSE_FORMATS[0]) return false;
  if (raw === RESPONSE_FORMATS[1]) return true;
  throw new AppError('validation_failed', `response_format must be ${RESPONSE_FORMATS.join(' or ')}.`, {
    param: 'response_format',
  });
}

/** The groups a REST request asks for; `include` is checked against what the resource offers. */
export function groupsOfRequest(
  args: { response_format?: unknown; include?: unknown },
  includes: readonly string[],
): Groups {
  const include = parseInclude(args.include, includes);
  return restGroups(parseResponseFormat(args.response_format), include);
}
