import { z } from 'zod';
import { hasCardNumber } from '../lib/card-numbers.ts';
import { AppError } from '../lib/errors.ts';
import { type IdKind, prefixes, tryParseId } from '../lib/ids.ts';
import { DATE_RANGE, dateProblem, readDate } from '../lib/timestamps.ts';

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
  throw new AppError('validation_failed', messageOf(schema, issue, param, raw), { param });
}

function messageOf(schema: z.ZodType, issue: z.core.$ZodIssue, param: string, raw: unknown): string {
  if (issue.code === 'unrecognized_keys') {
    // As an unknown query parameter's error does (src/rest/params.ts): the fields it does take.
    const allowed = fieldsAt(schema, issue.path);
    const parent = param.slice(0, Math.max(param.lastIndexOf('.'), 0));
    const whose = parent ? `${parent} takes` : 'This operation takes';
    return `Unknown field ${param}. ${allowed.length ? `${whose}: ${allowed.join(', ')}.` : `${whose} no fields.`}`;
  }
  if (issue.code === 'invalid_type') {
    // The value as sent (zod's issue leaves it out): absent is "required", anything else a wrong type.
    const given = valueAt(raw, issue.path);
    if (given === undefined) return `${param} is required.`;
    const expected = typeNames[issue.expected] ?? issue.expected;
    return given === null
      ? `${param} must be ${expected}, not null.`
      : `${param} must be ${expected}, not ${jsonTypeOf(given)}.`;
  }
  // The checks below say "must …" or "is …" of the field: they read as one sentence.
  return /^(must|is) /.test(issue.message) ? `${param} ${issue.message}.` : `${param}: ${issue.message}`;
}

const typeNames: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'a boolean (true or false)',
  array: 'an array',
  object: 'an object',
};

const valueAt = (raw: unknown, path: PropertyKey[]): unknown =>
  path.reduce<any>((v, k) => (v !== null && typeof v === 'object' ? v[k as string] : undefined), raw);

const jsonTypeOf = (v: unknown) =>
  Array.isArray(v) ? 'an array' : typeof v === 'object' ? 'an object' : `a ${typeof v}`;

/** The field names of the (nested) object at `path` of a body's definition. */
function fieldsAt(schema: z.ZodType, path: PropertyKey[]): string[] {
  let cur: any = schema;
  for (const key of [...path, null]) {
    // Through optional/nullable wrappers, pipes and arrays to the object that holds the key.
    for (let i = 0; i < 8 && cur && !(cur instanceof z.ZodObject); i++)
      cur = cur.unwrap?.() ?? cur.def?.in ?? cur.def?.innerType ?? cur.element;
    if (!(cur instanceof z.ZodObject)) return [];
    if (key === null) return Object.keys(cur.shape);
    cur = typeof key === 'number' ? cur : cur.shape[key as string];
  }
  return [];
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
    .meta({ description: `${/^[AEIOU]/.test(kind) ? 'An' : 'A'} ${kind} id (${prefixes[kind]}_…).` })
    .transform((v, ctx) => {
      const n = tryParseId(kind, v);
      if (n == null) {
        ctx.addIssue({ code: 'custom', message: `'${v}' is not a ${prefixes[kind]}_… id` });
        return z.NEVER;
      }
      return n;
    });

/** A date input read by the one date check (src/lib/timestamps.ts, docs/decisions.md: dates). */
const dateInput = (form: 'date' | 'date-time', described: string, meta: Record<string, string>) =>
  z
    .string()
    .meta(meta)
    .transform((v, ctx) => {
      const r = readDate(v, form);
      if ('date' in r) return r.date;
      ctx.addIssue({ code: 'custom', message: dateProblem(v, r.problem, described) });
      return z.NEVER;
    });

/**
 * A point in time: ISO 8601 with a UTC offset (`2026-12-01T09:30:00+02:00` or `…Z`), a real
 * calendar date from 1900-01-01 to 2200-12-31.
 */
export const instant = dateInput('date-time', 'ISO 8601 with an offset, e.g. 2026-12-01T09:30:00Z', {
  description: `ISO 8601 with an offset, e.g. 2026-12-01T09:30:00+02:00; from ${DATE_RANGE.first} to ${DATE_RANGE.last}.`,
  format: 'date-time',
});

/** A calendar date, YYYY-MM-DD, from 1900-01-01 to 2200-12-31; the value stays that text. */
export const date = dateInput('date', 'a date, YYYY-MM-DD', { format: 'date' }).transform((d) =>
  d.toISOString().slice(0, 10),
);

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
