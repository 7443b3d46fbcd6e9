import type { z } from 'zod';
import { luhn } from '../../lib/card-numbers.ts';

/**
 * Card data the API must never take in (PCI DSS): a full card number anywhere in a body, or a
 * card security code. Strict bodies already refuse a `number`, `pan`, `cvv`, … key as an unknown
 * field; this finds a card number hidden in any text (a note, a holder name). Refusals name the
 * field, never the value: the value must not reach a log, an error body or the database.
 * Stricter than the rule of every other free-text field (src/lib/card-numbers.ts): any bare
 * 13–19 digit run, Luhn-valid or not, and Luhn-valid digits in groups of any size, since a
 * payment body has no reason to hold either.
 */

/** 13–19 digits with no other digit around them, Luhn-valid or not. */
const BARE = /(?<!\d)\d{13,19}(?!\d)/;
/** Digits grouped by any spaces or dashes ("4111 1111 1111 1111", "41-11-…"), refused when Luhn-valid. */
const GROUPED = /(?<!\d)(?:\d[ -]?){12,18}\d(?!\d)/g;

export function looksLikeCardNumber(s: string): boolean {
  if (BARE.test(s)) return true;
  for (const m of s.matchAll(GROUPED)) {
    const digits = m[0].replace(/[ -]/g, '');
    if (digits.length >= 13 && digits.length <= 19 && luhn(digits)) return true;
  }
  return false;
}

/** A superRefine for a body: an issue at the first string holding a card number. */
export function refuseCardNumbers(
  value: unknown,
  ctx: z.RefinementCtx,
  path: (string | number)[] = [],
): boolean {
  if (typeof value === 'string') {
    if (!looksLikeCardNumber(value)) return false;
    ctx.addIssue({
      code: 'custom',
      path,
      message:
        'looks like a full card number, which is never accepted (send card.last4 only); the value was not stored.',
    });
    return true;
  }
  if (value && typeof value === 'object' && !(value instanceof Date))
    for (const [k, v] of Object.entries(value)) if (refuseCardNumbers(v, ctx, [...path, k])) return true;
  return false;
}
