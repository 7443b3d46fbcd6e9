import type { z } from 'zod';

/**
 * Card data the API must never take in (PCI DSS): a full card number anywhere in a body, or a
 * card security code. Strict bodies already refuse a `number`, `pan`, `cvv`, … key as an unknown
 * field; this finds a card number hidden in any text (a note, a holder name). Refusals name the
 * field, never the value: the value must not reach a log, an error body or the database.
 */

/** 13–19 digits with no other digit around them. */
const BARE = /(?<!\d)\d{13,19}(?!\d)/;
/** Digits grouped by spaces or dashes ("4111 1111 1111 1111"), refused only when Luhn-valid. */
const GROUPED = /(?<!\d)(?:\d[ -]?){12,18}\d(?!\d)/g;

function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return sum % 10 === 0;
}

export function looksLikeCardNumber(s: string): boolean {
  if (BARE.test(s)) return true;
  for (const m of s.matchAll(GROUPED)) {
    const digits = m[0].replace(/[ -]/g, '');
    if (digits.length >= 13 && digits.length <= 19 && luhn(digits)) return true;
  }
  return false;
}

/**
 * `text` with every card number in it replaced: for error messages that quote what they refuse
 * (GraphQL's coercion errors do, `got invalid value …`), which go back to the client and into logs.
 */
export function withoutCardNumbers(text: string): string {
  if (!/\d{4}/.test(text)) return text;
  return text.replace(new RegExp(BARE.source, 'g'), CARD_NUMBER_REMOVED).replace(GROUPED, (m) => {
    const digits = m.replace(/[ -]/g, '');
    return digits.length >= 13 && digits.length <= 19 && luhn(digits) ? CARD_NUMBER_REMOVED : m;
  });
}

const CARD_NUMBER_REMOVED = '[card number removed]';

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
