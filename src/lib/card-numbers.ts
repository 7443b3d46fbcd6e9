/**
 * The one card-number rule (PCI DSS spirit: a full card number is never stored or logged in the
 * clear; docs/decisions.md, Payments, "Card numbers"). A card number here is what a person
 * writes as one: 13 to 19 digits, in one group or in groups of at least three digits joined by a
 * single space or dash (`4111 1111 1111 1111`, `3782-822463-10005`), Luhn-valid, not starting
 * with 0 (no card number does; local phone numbers and `00…` international ones do), and not
 * right after a `+` (an international phone number). Groups of one or two digits never join
 * one: a dental note's tooth list (`18 17 16 15 14 13 12 11`) is not a card number. Within a
 * longer run of groups, every stretch of whole groups is tried (a card number followed by its
 * security code, `4111 1111 1111 1111 123`). A 20-digit order number or a number that fails
 * the Luhn check is left alone.
 *
 * Used three ways: free-text write fields refuse one (src/services/write-input.ts), and every
 * error message (both transports' error mapping) and log line (src/lib/logger.ts) has card
 * numbers and quoted security codes replaced.
 */

/** Groups of 3+ digits joined by one space or dash; no digit or `+` before, no digit after. */
const RUN = /(?<![\d+])\d{3,}(?:[ -]\d{3,})*(?!\d)/g;

export function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return sum % 10 === 0;
}

/** [start, end) offsets in `run` (a match of RUN) of its card numbers, left to right. */
function cardsIn(run: string, first = false): [number, number][] {
  const groups: { at: number; digits: string }[] = [];
  for (const m of run.matchAll(/\d+/g)) groups.push({ at: m.index, digits: m[0] });
  const found: [number, number][] = [];
  for (let i = 0; i < groups.length; i++) {
    if (groups[i].digits[0] === '0') continue;
    let digits = '';
    for (let j = i; j < groups.length; j++) {
      digits += groups[j].digits;
      if (digits.length > 19) break;
      if (digits.length >= 13 && luhn(digits)) {
        found.push([groups[i].at, groups[j].at + groups[j].digits.length]);
        if (first) return found;
        i = j;
        break;
      }
    }
  }
  return found;
}

/** Whether `text` holds a card number (by the rule above). */
export function hasCardNumber(text: string): boolean {
  if (!/\d{3}/.test(text)) return false;
  for (const m of text.matchAll(RUN)) if (cardsIn(m[0], true).length) return true;
  return false;
}

export const CARD_NUMBER_REMOVED = '[card number removed]';
export const SECURITY_CODE_REMOVED = '[removed]';

/**
 * A security code named next to its value, as people and graphql-js's value printer write it:
 * `cvv 853`, `CVC: 853`, `{ cvv: "8531" }`, `"security_code":"853"` (also JSON-escaped, inside a
 * log line's string). The name anchors it: a bare 3-digit number is left alone.
 */
const SECURITY_CODE =
  /(?<![a-z])(cvv2?|cvc2?|cvn|csc|cav2|cid|security[ _-]?code|card[ _-]?code|card[ _-]?verification(?:[ _-]?(?:value|code))?)([^a-z0-9]{0,8}?)\d{3,4}(?!\d)/gi;

function withoutCardNumbersIn(text: string): string {
  return text.replace(RUN, (run) => {
    let out = '';
    let from = 0;
    for (const [a, b] of cardsIn(run)) {
      out += run.slice(from, a) + CARD_NUMBER_REMOVED;
      from = b;
    }
    return out + run.slice(from);
  });
}

/**
 * `text` with every card number and every named security code replaced: for error messages that
 * quote what they refuse (graphql-js's coercion errors do: `got invalid value { cvv: "8531" }`).
 */
export function redactCardData(text: string): string {
  if (!/\d{3}/.test(text)) return text;
  return withoutCardNumbersIn(text).replace(SECURITY_CODE, `$1$2${SECURITY_CODE_REMOVED}`);
}

/** A JSON string literal (with its escapes). */
const JSON_STRING = /"(?:[^"\\]|\\.)*"/g;

/**
 * A serialized JSON log line with card data replaced. Card numbers are looked for inside its
 * string values only: a number value (pino's `time`, 13 digits of milliseconds) is not text
 * anyone typed, and a tenth of them would pass the Luhn check. Security codes are looked for
 * across the line, so that `"cvv":"853"` (a key and its value) is caught too.
 */
export function redactLogLine(line: string): string {
  const strings = line.replace(JSON_STRING, (s) => (/\d{3}/.test(s) ? withoutCardNumbersIn(s) : s));
  return strings.replace(SECURITY_CODE, `$1$2${SECURITY_CODE_REMOVED}`);
}
