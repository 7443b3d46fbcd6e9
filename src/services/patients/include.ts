import { AppError } from '../../lib/errors.ts';
import type { PatientIncludes } from '../presenters.ts';

const known = ['owner', 'species'] as const;

/** Parses `include=owner,species` (a comma list, or repeated values). Unknown values are a 422. */
export function parseInclude(raw: unknown): PatientIncludes {
  const values = (Array.isArray(raw) ? raw : raw == null ? [] : [raw])
    .flatMap((v) => String(v).split(','))
    .map((v) => v.trim())
    .filter(Boolean);
  const unknown = values.filter((v) => !(known as readonly string[]).includes(v));
  if (unknown.length) {
    throw new AppError(
      'validation_failed',
      `Unknown include value(s): ${unknown.join(', ')}. Allowed: ${known.join(', ')}.`,
      {
        param: 'include',
      },
    );
  }
  return { owner: values.includes('owner'), species: values.includes('species') };
}

export type ResponseFormat = 'concise' | 'detailed';

export function parseResponseFormat(raw: unknown): ResponseFormat {
  if (raw == null || raw === '') return 'concise';
  if (raw === 'concise' || raw === 'detailed') return raw;
  throw new AppError('validation_failed', 'response_format must be concise or detailed.', {
    param: 'response_format',
  });
}
