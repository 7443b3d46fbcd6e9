import { z } from 'zod';
import { hasCardNumber } from '../lib/card-numbers.ts';
import { AppError } from '../lib/errors.ts';
import { type IdKind, prefixes, tryParseId } from '../lib/ids.ts';

/**
 * The one definition of a write's request body: a zod schema from which the body parser (here),
 * the GraphQL input type (src/schema/write-inputs.ts) and the OpenAPI request body
 * (src/rest/request-bodies.ts) follow. Bodies are strict objects: an unknown field is a 422
 * naming it, so a misspelt field is never silently dropped.
 */
export { z };

/** Checks a body against its definition: the value, or a 422 `validation_failed` naming the field. */
export function parseInput<T>(schema: z.ZodType<T>, raw: unknown): T {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw))
    throw new AppError('validation_failed', 'The body must be a JSON object.', { param: 'body' });
  const result = schema.safeParse(raw);
  if (result.success) return result.data;
  // A misspelt field explains the other complaints (a required one "missing"): it comes first.
  const issues = result.error.issues;
  const issue = issues.find((i) => i.code === 'unrecognized_keys') ?? issues[0];
  const path = issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : String(p)));
  if (issue.code === 'unrecognized_keys') path.push(issue.keys[0]);
  const param = path.join('.').replace(/\.\[/g, '[') || 'body';
  const message =
    issue.code === 'unrecognized_keys'
      ? `Unknown field ${param}; it is not one this operation takes.`
      : issue.code === 'invalid_type' && issue.input === undefined
        ? `${param} is required.`
        : `${param}: ${issue.message}`;
  throw new AppError('validation_failed', message, { param });
}

const noNul = (v: string) => !v.includes('\u0000');

/**
 * A string someone issued, not free text (a national id number): no card-number check, since
 * some are Luhn-valid 13-digit numbers by design (South Africa's). Each use is listed, with its
 * reason, in test/card-free-text.test.ts.
 */
export const identifier = (max: number) =>
  z.string().max(max).refine(noNul, 'must not contain a NUL character');

/**
 * The free-text check of the card-number rule (src/lib/card-numbers.ts; docs/decisions.md, "Card
 * numbers"): a full card number is never stored, so a field holding one is a 422, and nothing is
 * written. Exported so test/card-free-text.test.ts can tell which string fields carry it.
 */
export const noCardNumber = (v: string) => !hasCardNumber(v);
export const CARD_REFUSAL =
  'must not hold a full card number: card numbers are never stored (PCI DSS), so nothing was written; give at most its last 4 digits';

/**
 * Free text of at most `max` characters (PostgreSQL text cannot hold a NUL): every note, name,
 * description, reason or label of a write. It refuses a card number (noCardNumber).
 */
export const text = (max: number) =>
  z.string().max(max).refine(noNul, 'must not contain a NUL character').refine(noCardNumber, CARD_REFUSAL);

/** Text that must say something. */
export const name = (max: number) => text(max).refine((v) => v.trim() !== '', 'must not be empty');

/** A reference to another record by its public id (`<name>_id`); the number behind it. */
export const idOf = (kind: IdKind) =>
  z
    .string()
    .meta({ description: `A ${kind} id (${prefixes[kind]}_…).` })
    .transform((v, ctx) => {
      const n = tryParseId(kind, v);
      if (n == null) {
        ctx.addIssue({ code: 'custom', message: `'${v}' is not a ${prefixes[kind]}_… id` });
        return z.NEVER;
      }
      return n;
    });

/** A point in time: ISO 8601 with a UTC offset (`2026-12-01T09:30:00+02:00` or `…Z`). */
export const instant = z
  .string()
  .meta({ description: 'ISO 8601 with an offset, e.g. 2026-12-01T09:30:00+02:00.', format: 'date-time' })
  .transform((v, ctx) => {
    const ok = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})$/.test(v);
    const d = new Date(v);
    if (!ok || Number.isNaN(d.getTime())) {
      ctx.addIssue({ code: 'custom', message: 'must be ISO 8601 with an offset, e.g. 2026-12-01T09:30:00Z' });
      return z.NEVER;
    }
    return d;
  });

/** A calendar date, YYYY-MM-DD. */
export const date = z
  .string()
  .meta({ format: 'date' })
  .refine((v) => /^\d{4}-\d{2}-\d{2}$/.test(v) && !Number.isNaN(Date.parse(`${v}T00:00:00Z`)), {
    message: 'must be a date, YYYY-MM-DD',
    // The next check reads the value as a date: it must not run on one that is not.
    abort: true,
  })
  .refine((v) => new Date(`${v}T00:00:00Z`).toISOString().startsWith(v), 'is not a calendar date');

/** An amount as numeric(12, 2) holds it: at most two decimals, below 10^10; zero only when `min` is 0. */
export const amount2 = (min: 0 | 'positive') =>
  (min === 0 ? z.number().min(0) : z.number().positive())
    .max(9_999_999_999.99)
    .refine((v) => Math.abs(v * 100 - Math.round(v * 100)) < 1e-6, 'must have at most two decimals');

/** A display colour: #RGB or #RRGGBB. */
export const color = z
  .string()
  .regex(/^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/, 'must be a colour, #RGB or #RRGGBB')
  .meta({ description: 'A display colour, e.g. #336699.' });

/** A `PATCH` body field that may be cleared: absent keeps it, null clears it. */
export const clearable = <T extends z.ZodType>(t: T) => t.nullable().optional();

/**
 * The names of a body's fields, as the GraphQL and OpenAPI derivations see them; each write's
 * definition exports its schemas so tests can send their refusals.
 */
export const fieldsOf = (schema: z.ZodObject): string[] => Object.keys(schema.shape);
