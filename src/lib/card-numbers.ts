/**
 * The one card-number rule (PCI DSS spirit: a full card number is never stored or logged in the
 * clear; docs/decisions.md, Payments, "Card numbers"). A card number here is what a person
 * writes as one, however they write it (issue 34):
 *
 * - 13 to 19 digits, Luhn-valid, in one group or in groups of at least three digits. Digits of
 *   any script count as theirs (`４１１１…`, Arabic-Indic `٤١١١…`), and invisible characters
 *   (zero-width spaces and joiners, word joiners, BOMs, direction marks, Hangul fillers:
 *   Unicode's format controls, combining marks and default-ignorable code points) are read as
 *   absent, even between every digit.
 * - Groups are joined by any run of separators: any character that is neither a letter nor a
 *   digit (not `\p{L}`, not `\p{N}`: spaces of any width, line breaks, punctuation, symbols:
 *   `4111.1111.1111.1111`, `4111|1111|…`, `(4111)(1111)…`, `4111・1111…`, `4111 - 1111 …`). The
 *   same separator must join every group (`4111,1111,1111,1111`; whitespace counts as one
 *   space, so `, ` and `,` differ but a double space does not), unless the groups are a card's
 *   own (4-4-4-4, 4-4-4-4-3, 4-6-5, 4-6-4): `4111 1111-1111.1111` is a card number, but a list
 *   of phone numbers (`050-123-4567, 052-765-4321`, `050-123-4567 - 052-765-4321`) is not read
 *   as one long number. A group that is a local phone number as written (a trunk `0`, then 8 to
 *   11 digits not starting with 0: `0501234567`) joins no other group, so a list of them
 *   (`0501234567, 0527654321`) is no 19-digit number either.
 * - Leading zeros are padding: `0004111111111111111` is `4111111111111111`, and `0378282246310005`
 *   is an Amex (a local number is a trunk `0` and at most 12 digits, fewer than a card's 13).
 *   Only the international prefix is not: `00` in front of at most 15 more digits (E.164's
 *   longest number) is a phone number, as is a `+` right before at most 15 digits
 *   (`+972 50 123 4567`, `0049 1512 34567893`). So a 13- to 15-digit card behind exactly `00`
 *   passes: the price of never refusing a written international number.
 * - Encoded as a machine writes it: a URL's percent escapes (`4111%201111…`) and JSON's (`\t`,
 *   `\u00a0`, also escaped twice in a log line) are read as the characters they stand for.
 *
 * Left alone, because a clinic writes them every day: groups of one or two digits never join
 * one (a dental note's tooth list, `18 17 16 15 14 13 12 11`; dates); a number that fails the
 * Luhn check (an order number); more than 19 digits (a 20-digit reference). And digits inside
 * an identifier, so that ours are never mangled: a group touching Latin letters on both sides
 * (`Migration20261127000002Events`), touching a word longer than six letters
 * (`Migration20261122000000`), or touching letters that touch other digits (a hex digest, a
 * UUID's `…b602-7231-4888-985d…`), never belongs to a card number. A group glued on one side
 * to a short word alone (one to six letters with no digit beyond: `Visa4111111111111111`,
 * `cc4111…`, `4111…1111x`) does: as the whole number, or as the first or last group of a
 * card's own grouping (`a4111 1111 1111 1111`, `Visa4111-1111-…`), unless that word is four
 * or more hex letters (a UUID's first segment, `abcd4111-1111-…`). Our ids are `pat_12`,
 * `evt_104233` (at most ten digits) and `req_` with 12 base64url characters: never 13 digits,
 * so no id prefix is exempt (`pat_4111111111111111` is a card number in an unknown id).
 * Within a longer run of groups every stretch of whole groups is tried (a card number followed
 * by its security code, `4111 1111 1111 1111 123`).
 *
 * Used three ways: free-text write fields refuse one (src/services/write-input.ts), and every
 * error message (both transports' error mapping) and log line (src/lib/logger.ts) has card
 * numbers and named security codes replaced. It runs on every log line and every free-text
 * field, so it is cheap: text with no three ASCII digits in a row and nothing but printable
 * ASCII is answered by two ASCII tests (Unicode-property regexes scan ten times slower in V8),
 * and the scan jumps from digit to digit, classifying characters by a table.
 */
import { decodeEscapes, hasEscapes } from './escaped-text.ts';

/** What a character is to the rule. */
const Kind = {
  /** Another letter or a number that is not a decimal digit (`½`, `²`, Hebrew, CJK): ends a run. */
  Other: 0,
  Digit: 1,
  /**
   * Read as absent: format controls (zero-width space and joiners, U+2060, U+FEFF, bidi marks),
   * combining marks and default-ignorable code points (Hangul fillers, variation selectors).
   */
  Ignorable: 2,
  /** Neither a letter nor a digit: spaces, punctuation, symbols, controls. */
  Separator: 3,
  /** A Latin letter (fullwidth too): digits touching one may be part of a word. */
  Letter: 4,
  /** A separator that may start a phone number. */
  Plus: 5,
} as const;
type Kind = (typeof Kind)[keyof typeof Kind];

const ASCII_KINDS: Kind[] = new Array(128).fill(Kind.Separator);
for (let c = 48; c <= 57; c++) ASCII_KINDS[c] = Kind.Digit;
for (let c = 65; c <= 90; c++) ASCII_KINDS[c] = ASCII_KINDS[c + 32] = Kind.Letter;
ASCII_KINDS[43] = Kind.Plus;

/** Kinds of the non-ASCII characters met so far (a text uses few distinct ones); bounded. */
const kinds = new Map<number, Kind>();
const IGNORABLE = /^[\p{Cf}\p{M}\p{DI}]$/u;
const digitValues = new Map<number, number>();
const isDigit = (cp: number) => /^\p{Nd}$/u.test(String.fromCodePoint(cp));

function kindOf(cp: number): Kind {
  if (cp < 128) return ASCII_KINDS[cp];
  let k = kinds.get(cp);
  if (k !== undefined) return k;
  const ch = String.fromCodePoint(cp);
  k = isDigit(cp)
    ? Kind.Digit
    : IGNORABLE.test(ch)
      ? Kind.Ignorable
      : /^[\uff21-\uff3a\uff41-\uff5a]$/.test(ch)
        ? Kind.Letter
        : /^[\p{L}\p{N}]$/u.test(ch)
          ? Kind.Other
          : cp === 0xff0b || cp === 0xfe62
            ? Kind.Plus
            : Kind.Separator;
  if (kinds.size < 10_000) kinds.set(cp, k);
  return k;
}

/**
 * A decimal digit's value, for any script: Unicode encodes each script's digits as ten
 * consecutive code points from 0 to 9 (some scripts' sets follow each other), so the value is
 * the distance from the first digit of the block, modulo 10.
 */
function digitValue(cp: number): number {
  if (cp < 128) return cp - 48;
  let v = digitValues.get(cp);
  if (v === undefined) {
    let first = cp;
    while (isDigit(first - 1)) first--;
    v = (cp - first) % 10;
    if (digitValues.size < 10_000) digitValues.set(cp, v);
  }
  return v;
}

/** Where a digit may be: an ASCII one, or any character from U+0660 (the first digit past ASCII) up. */
const MAYBE_DIGIT = /[0-9\u0660-\uffff]/g;
const INVISIBLE = /[\p{Cf}\p{M}\p{DI}]/gu;
const DASH = /[\p{Pd}\u2212]/gu;
/** The groups card numbers are printed in: a stretch in them may mix separators. */
const CARD_SHAPE = /^4(?:,4)*(?:,[3-5])?$|^4,6,[45]$/;
/** A local phone number as written: its trunk 0, then 8 to 11 digits (`0501234567`, `07911123456`). */
const LOCAL_PHONE = /^0[1-9]\d{7,10}$/;
/** How long a word glued to a card number may be (`Visa`, `card`, `cc`, `no`, `x`); a longer one names something. */
const SHORT_WORD = 6;

/**
 * Whether `text` may hold a card number at all (the fast path, as most text and log lines go): 13
 * ASCII digits, 3 in a row, when it is printable ASCII with no escape (its only digits); else 3
 * in a row, or digits that something other than printable ASCII or an escape could stand for.
 */
function mayHold(text: string): boolean {
  if (PLAIN.test(text)) return asciiDigits(text) >= 13 && /\d{3}/.test(text);
  if (/\d{3}/.test(text)) return true;
  return (
    /[^\x20-\x7e]|%[0-9a-fA-F]{2}|\\[tnrfbvu]/.test(text) &&
    /[0-9\u0660-\uffff]|%[0-9a-fA-F]{2}|\\u/.test(text)
  );
}

/** Printable ASCII without a %-escape or a backslash (which could stand for other characters). */
const PLAIN = /^(?:[\x20-\x24\x26-\x5b\x5d-\x7e])*$/;

const isAsciiDigit = (c: number) => c >= 48 && c <= 57;

function asciiDigits(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) if (isAsciiDigit(text.charCodeAt(i))) n++;
  return n;
}

export function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return sum % 10 === 0;
}

interface Group {
  /** [at, end) in the text: from its first digit to after its last. */
  at: number;
  end: number;
  /** Its digits, in ASCII. */
  digits: string;
}

const step = (cp: number) => (cp > 0xffff ? 2 : 1);

/** The digits from `at` on, invisible characters between them skipped. */
function groupAt(text: string, at: number): Group {
  let digits = '';
  let end = at;
  for (let i = at; i < text.length; ) {
    const cp = text.codePointAt(i)!;
    const k = kindOf(cp);
    if (k === Kind.Digit) {
      digits += String.fromCharCode(48 + digitValue(cp));
      i += step(cp);
      end = i;
    } else if (k === Kind.Ignorable) i += step(cp);
    else break;
  }
  return { at, end, digits };
}

/** The next group after `from` (a group's end) when only separators (at least one) lie between. */
function groupAfter(text: string, from: number): Group | null {
  let separated = false;
  for (let i = from; i < text.length; ) {
    const cp = text.codePointAt(i)!;
    const k = kindOf(cp);
    if (k === Kind.Digit) return separated ? groupAt(text, i) : null;
    if (k === Kind.Separator || k === Kind.Plus) separated = true;
    else if (k !== Kind.Ignorable) return null;
    i += step(cp);
  }
  return null;
}

/** What joins two groups, as a kind: its separators, any whitespace as one space, each dash as `-`. */
const joinOf = (between: string) =>
  [...new Set(between.replace(INVISIBLE, '').normalize('NFKC').replace(/\s+/g, ' ').replace(DASH, '-'))]
    .sort()
    .join('');

/** Whether a group may join others: three digits or more, and not a local phone number. */
const joinable = (g: Group) => g.digits.length >= 3 && !LOCAL_PHONE.test(g.digits);

/** The kind of the character before `at` (or from `at` on, `dir` 1), invisible ones skipped, and where it is. */
function kindNext(text: string, at: number, dir: -1 | 1): { kind: Kind; at: number } {
  for (let i = at; dir < 0 ? i > 0 : i < text.length; ) {
    let p = dir < 0 ? i - 1 : i;
    let cp = text.codePointAt(p)!;
    if (dir < 0 && cp >= 0xdc00 && cp <= 0xdfff && p > 0) {
      const whole = text.codePointAt(p - 1)!;
      if (whole > 0xffff) {
        cp = whole;
        p--;
      }
    }
    const k = kindOf(cp);
    if (k !== Kind.Ignorable) return { kind: k, at: p };
    i = dir < 0 ? p : p + step(cp);
  }
  return { kind: Kind.Separator, at: dir < 0 ? 0 : text.length };
}

const HEX_LETTER = /^[a-fA-F\uff21-\uff26\uff41-\uff46]$/;

/** What a group touches on one side: nothing (a separator, an end), a short word alone, or an identifier. */
const Glue = { None: 0, Word: 1, HexWord: 2, Identifier: 3 } as const;
type Glue = (typeof Glue)[keyof typeof Glue];

/**
 * The word glued to a group's side (`dir` -1: before `at`, its first digit; 1: from `at`, after its
 * last): a Word when it is one to SHORT_WORD Latin letters and no digit lies beyond them
 * (`Visa4111…`, `…1111x`), a HexWord when that word is four or more hex letters, and an
 * Identifier when it is longer or touches more digits (`Migration2026…`, a digest's `…3f4111…`).
 */
function glueOf(text: string, at: number, dir: -1 | 1): Glue {
  let next = kindNext(text, at, dir);
  if (next.kind !== Kind.Letter) return Glue.None;
  let letters = 0;
  let hex = true;
  while (next.kind === Kind.Letter) {
    if (++letters > SHORT_WORD) return Glue.Identifier;
    hex &&= HEX_LETTER.test(text[next.at]);
    next = kindNext(text, dir < 0 ? next.at : next.at + 1, dir);
  }
  if (next.kind === Kind.Digit) return Glue.Identifier;
  return hex && letters >= 4 ? Glue.HexWord : Glue.Word;
}

/** [start, end) offsets in `text` of its card numbers, left to right (the first only, with `first`). */
function cardSpans(original: string, first = false): [number, number][] {
  const found: [number, number][] = [];
  if (!mayHold(original)) return found;
  const decoded = hasEscapes(original) ? decodeEscapes(original) : null;
  const text = decoded ? decoded.text : original;
  const span = (a: number, b: number): [number, number] =>
    decoded ? [decoded.from[a], decoded.from[b]] : [a, b];
  for (let i = 0; i < text.length; ) {
    MAYBE_DIGIT.lastIndex = i;
    const m = MAYBE_DIGIT.exec(text);
    if (!m) break;
    i = m.index;
    const cp = text.codePointAt(i)!;
    if (kindOf(cp) !== Kind.Digit) {
      i += step(cp);
      continue;
    }
    // A run: groups of three or more digits, each joined to the next by separators.
    const groups = [groupAt(text, i)];
    for (let g = groups[0]; joinable(g); ) {
      const after = groupAfter(text, g.end);
      if (!after || !joinable(after)) break;
      groups.push(after);
      g = after;
    }
    i = groups[groups.length - 1].end;
    if (groups.length === 1 && groups[0].digits.length < 13) continue;
    for (const [a, b] of cardsInRun(text, groups)) {
      found.push(span(a, b));
      if (first) return found;
    }
  }
  return found;
}

/** The stretches of whole groups of a run that are card numbers, by the rule above. */
function cardsInRun(text: string, groups: Group[]): [number, number][] {
  const out: [number, number][] = [];
  if (groups.reduce((n, g) => n + g.digits.length, 0) < 13) return out;
  const last = groups.length - 1;
  const joins: string[] = [];
  const join = (k: number) => (joins[k] ??= joinOf(text.slice(groups[k].end, groups[k + 1].at)));
  // A group touching letters: part of an identifier (never of a card), or glued to a short word.
  const first = glueOf(text, groups[0].at, -1);
  const end = glueOf(text, groups[last].end, 1);
  if (last === 0 && first !== Glue.None && end !== Glue.None) return out;
  const lo = first === Glue.Identifier ? 1 : 0;
  const hi = end === Glue.Identifier ? last - 1 : last;
  let total = 0;
  for (let k = lo; k <= hi; k++) total += groups[k].digits.length;
  if (total < 13) return out;
  for (let i = lo; i <= hi; i++) {
    let digits = '';
    for (let j = i; j <= hi; j++) {
      digits += groups[j].digits;
      if (digits.length < 13) continue;
      const zeros = digits.length - digits.replace(/^0+/, '').length;
      const significant = digits.length - zeros;
      if (significant > 19) break;
      if (significant < 13 || !luhn(digits)) continue;
      const afterPlus = kindNext(text, groups[i].at, -1).kind === Kind.Plus;
      const phone = significant <= 15 && (afterPlus ? zeros === 0 : zeros === 2);
      if (phone) continue;
      const shape = () =>
        CARD_SHAPE.test(
          groups
            .slice(i, j + 1)
            .map((g) => g.digits.length)
            .join(','),
        );
      // Glued to a short word on one side: the whole number in one group, or a card's own grouping.
      const glued = (i === 0 ? first : Glue.None) || (j === last ? end : Glue.None);
      if (i === 0 && first && j === last && end) continue;
      if (glued && i !== j && (glued === Glue.HexWord || !shape())) continue;
      let joined = true;
      for (let k = i + 1; k < j && joined; k++) joined = join(k) === join(i);
      if (!joined) joined = shape();
      if (!joined) continue;
      out.push([groups[i].at, groups[j].end]);
      i = j;
      break;
    }
  }
  return out;
}

/** Whether `text` holds a card number (by the rule above). */
export function hasCardNumber(text: string): boolean {
  return cardSpans(text, true).length > 0;
}

export const CARD_NUMBER_REMOVED = '[card number removed]';
export const SECURITY_CODE_REMOVED = '[removed]';

/**
 * A security code named next to its value, as people and graphql-js's value printer write it:
 * `cvv 853`, `CVC: 853`, `{ cvv: "8531" }`, `"security_code":"853"` (also JSON-escaped, inside a
 * log line's string), in digits of any script. The name anchors it: a bare 3-digit number is left alone.
 */
const SECURITY_CODE =
  /(?<![a-z])(cvv2?|cvc2?|cvn|csc|cav2|cid|security[ _-]?code|card[ _-]?code|card[ _-]?verification(?:[ _-]?(?:value|code))?)([^a-z0-9]{0,8}?)\p{Nd}{3,4}(?!\p{Nd})/giu;

function withoutCardNumbersIn(text: string): string {
  const spans = cardSpans(text);
  if (!spans.length) return text;
  let out = '';
  let from = 0;
  for (const [a, b] of spans) {
    out += text.slice(from, a) + CARD_NUMBER_REMOVED;
    from = b;
  }
  return out + text.slice(from);
}

/**
 * `text` with every card number and every named security code replaced: for error messages that
 * quote what they refuse (graphql-js's coercion errors do: `got invalid value { cvv: "8531" }`).
 */
export function redactCardData(text: string): string {
  return withoutCardNumbersIn(text).replace(SECURITY_CODE, `$1$2${SECURITY_CODE_REMOVED}`);
}

/** A JSON string literal (with its escapes). */
const JSON_STRING = /"(?:[^"\\]|\\.)*"/g;

/**
 * A serialized JSON log line with card data replaced. Card numbers are looked for inside its
 * string values only: a number value (pino's `time`, 13 digits of milliseconds) is not text
 * anyone typed, and a tenth of them would pass the Luhn check. A string is read with its JSON
 * escapes (a tab is `\t` in the line) and replaced in place, so the line stays valid JSON.
 * Security codes are looked for across the line, so that `"cvv":"853"` (a key and its value) is
 * caught too.
 */
export function redactLogLine(line: string): string {
  const strings = line.replace(JSON_STRING, withoutCardNumbersIn);
  return strings.replace(SECURITY_CODE, `$1$2${SECURITY_CODE_REMOVED}`);
}
