/**
 * The one card-number rule (PCI DSS spirit: a full card number is never stored or logged in the
 * clear; docs/decisions.md, Payments, "Card numbers"). A card number here is what a person
 * writes as one, however they write it (issue 34):
 *
 * - 13 to 19 digits, Luhn-valid, in one group or in groups of at least three digits. Digits of
 *   any script count as theirs (`４１１１…`, Arabic-Indic `٤١١١…`), and invisible characters
 *   (zero-width spaces and joiners, word joiners, BOMs, direction marks: Unicode's format
 *   controls, and combining marks) are read as absent, even between every digit.
 * - Groups are joined by any run of separators: spaces of any width and count, tabs, line
 *   breaks, any dash, `.`, `,`, `/`, `\`, `_`, `'`, `·` (`4111.1111.1111.1111`, `4111 - 1111 …`).
 *   The same separator must join every group (`4111,1111,1111,1111`), unless the groups are a
 *   card's own (4-4-4-4, 4-4-4-4-3, 4-6-5, 4-6-4): `4111 1111-1111.1111` is a card number, but a
 *   list of phone numbers (`050-123-4567, 052-765-4321`) is not read as one long number.
 * - Leading zeros are padding: `0004111111111111111` is `4111111111111111`. Only a phone
 *   number's prefix is not: a trunk `0` or the international `00` in front of at most 15 more
 *   digits (E.164's longest number) is a phone number, as is a `+` right before at most 15
 *   digits (`+972 50 123 4567`, `0049 1512 34567893`, `050-123-4567`). So a 15-digit card
 *   behind exactly `00` passes: the price of never refusing a written phone number.
 * - Encoded as a machine writes it: a URL's percent escapes (`4111%201111…`) and JSON's (`\t`,
 *   `\u00a0`, also escaped twice in a log line) are read as the characters they stand for.
 *
 * Left alone, because a clinic writes them every day: groups of one or two digits never join
 * one (a dental note's tooth list, `18 17 16 15 14 13 12 11`; dates); a number that fails the
 * Luhn check (an order number); more than 19 digits (a 20-digit reference). And digits touching
 * a Latin letter are part of a word, not a number someone wrote: such a group never belongs to
 * a card number, so our own identifiers are never mangled (`Migration20261127000002Events`, a
 * hex digest, a UUID's `…b602-7231-4888-985d…`). `Visa4111111111111111` passes for it;
 * `Visa 4111…`, `card:4111…` do not. Within a longer run of groups every stretch of whole
 * groups is tried (a card number followed by its security code, `4111 1111 1111 1111 123`).
 *
 * Used three ways: free-text write fields refuse one (src/services/write-input.ts), and every
 * error message (both transports' error mapping) and log line (src/lib/logger.ts) has card
 * numbers and named security codes replaced. It runs on every log line and every free-text
 * field, so it is cheap: text with no three ASCII digits in a row and nothing but printable
 * ASCII is answered by two ASCII tests (Unicode-property regexes scan ten times slower in V8),
 * and the scan jumps from digit to digit, classifying characters by a table.
 */

/** What a character is to the rule. */
const Kind = {
  Other: 0,
  Digit: 1,
  /** Read as absent: format controls (zero-width space and joiners, U+2060, U+FEFF, bidi marks) and combining marks. */
  Ignorable: 2,
  Separator: 3,
  /** A Latin letter (fullwidth too): digits touching one are part of a word. */
  Letter: 4,
  Plus: 5,
} as const;
type Kind = (typeof Kind)[keyof typeof Kind];

/**
 * Between groups: whitespace (JavaScript's `\s`, less U+FEFF, a format control), any dash and the
 * minus sign, and the punctuation people group digits with (fullwidth forms too). ASCII ones are
 * in ASCII_KINDS.
 */
const SEPARATOR =
  /^[\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\p{Pd}\u2212\u2019\u00b7\u2022\u060c\u066b\u066c\u3001\u3002\uff07\uff0c\uff0e\uff0f\uff3c\uff3f]$/u;
const ASCII_KINDS: Kind[] = new Array(128).fill(Kind.Other);
for (let c = 48; c <= 57; c++) ASCII_KINDS[c] = Kind.Digit;
for (const ch of "\t\n\v\f\r -.,/\\_'") ASCII_KINDS[ch.charCodeAt(0)] = Kind.Separator;
for (let c = 65; c <= 90; c++) ASCII_KINDS[c] = ASCII_KINDS[c + 32] = Kind.Letter;
ASCII_KINDS[43] = Kind.Plus;

/** Kinds of the non-ASCII characters met so far (a text uses few distinct ones); bounded. */
const kinds = new Map<number, Kind>();
const digitValues = new Map<number, number>();
const isDigit = (cp: number) => /^\p{Nd}$/u.test(String.fromCodePoint(cp));

function kindOf(cp: number): Kind {
  if (cp < 128) return ASCII_KINDS[cp];
  let k = kinds.get(cp);
  if (k !== undefined) return k;
  const ch = String.fromCodePoint(cp);
  k = isDigit(cp)
    ? Kind.Digit
    : /^[\p{Cf}\p{M}]$/u.test(ch)
      ? Kind.Ignorable
      : SEPARATOR.test(ch)
        ? Kind.Separator
        : /^[\uff21-\uff3a\uff41-\uff5a]$/.test(ch)
          ? Kind.Letter
          : cp === 0xff0b
            ? Kind.Plus
            : Kind.Other;
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
const INVISIBLE = /[\s\p{Cf}\p{M}]/gu;
const DASH = /[\p{Pd}\u2212]/gu;
/** The groups card numbers are printed in: a stretch in them may mix separators. */
const CARD_SHAPE = /^4(?:,4)*(?:,[3-5])?$|^4,6,[45]$/;

/** Percent escapes and JSON escapes (a backslash, maybe itself escaped, and `t`, `n`, … or `uXXXX`). */
const ENCODED = /\\+(?:u[0-9a-fA-F]{4}|[tnrfbv])|(?:%[0-9a-fA-F]{2})+/g;
const HAS_ENCODED = /\\+(?:u[0-9a-fA-F]{4}|[tnrfbv])|%[0-9a-fA-F]{2}/;
/** Strict, and keeping a BOM (an invisible character the rule reads as absent, not one to drop). */
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const CONTROL_ESCAPES: Record<string, string> = { t: '\t', n: '\n', r: '\r', f: '\f', b: '\b', v: '\v' };

/**
 * Whether `text` may hold a card number at all (the fast path, as most text and log lines go):
 * three ASCII digits in a row, or digits that something other than printable ASCII or an escape
 * could sit between or stand for.
 */
function mayHold(text: string): boolean {
  if (/\d{3}/.test(text)) return true;
  return (
    /[^\x20-\x7e]|%[0-9a-fA-F]{2}|\\[tnrfbvu]/.test(text) &&
    /[0-9\u0660-\uffff]|%[0-9a-fA-F]{2}|\\u/.test(text)
  );
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

/**
 * `text` with its escapes read as the characters they stand for, and where each of its UTF-16
 * units came from in `text` (`from[i]`; `from[length]` is the end).
 */
function decode(text: string): { text: string; from: number[] } {
  let out = '';
  const from: number[] = [];
  let last = 0;
  const literal = (a: number, b: number) => {
    out += text.slice(a, b);
    for (let i = a; i < b; i++) from.push(i);
  };
  for (const m of text.matchAll(ENCODED)) {
    literal(last, m.index);
    last = m.index + m[0].length;
    const s = m[0];
    if (s[0] === '\\') {
      const tail = s.slice(s.lastIndexOf('\\') + 1);
      out +=
        tail[0] === 'u' ? String.fromCharCode(Number.parseInt(tail.slice(1), 16)) : CONTROL_ESCAPES[tail];
      from.push(m.index);
      continue;
    }
    // Percent escapes: UTF-8 bytes; a sequence that is not UTF-8 stays as written.
    const bytes = s
      .slice(1)
      .split('%')
      .map((h) => Number.parseInt(h, 16));
    for (let i = 0; i < bytes.length; ) {
      const b = bytes[i];
      const n =
        b < 0x80 ? 1 : b >= 0xc2 && b < 0xe0 ? 2 : b >= 0xe0 && b < 0xf0 ? 3 : b >= 0xf0 && b < 0xf5 ? 4 : 0;
      const at = m.index + i * 3;
      let ch = '';
      if (n && i + n <= bytes.length) {
        try {
          ch = UTF8.decode(Uint8Array.from(bytes.slice(i, i + n)));
        } catch {}
      }
      if (ch) {
        out += ch;
        for (let k = 0; k < ch.length; k++) from.push(at);
        i += n;
      } else {
        literal(at, at + 3);
        i += 1;
      }
    }
  }
  literal(last, text.length);
  from.push(text.length);
  return { text: out, from };
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
    if (k === Kind.Separator) separated = true;
    else if (k !== Kind.Ignorable) return null;
    i += step(cp);
  }
  return null;
}

/** What joins two groups, as a kind: its visible separators, each dash as `-`. */
const joinOf = (between: string) =>
  [...new Set(between.replace(INVISIBLE, '').normalize('NFKC').replace(DASH, '-'))].sort().join('');

const kindBefore = (text: string, at: number) => (at > 0 ? kindOf(text.codePointAt(at - 1)!) : Kind.Other);
// (A low surrogate before `at` belongs to a character no rule looks at: Other either way.)

/** [start, end) offsets in `text` of its card numbers, left to right (the first only, with `first`). */
function cardSpans(original: string, first = false): [number, number][] {
  const found: [number, number][] = [];
  if (!mayHold(original)) return found;
  const decoded = HAS_ENCODED.test(original) ? decode(original) : null;
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
    for (let g = groups[0]; g.digits.length >= 3; ) {
      const after = groupAfter(text, g.end);
      if (!after || after.digits.length < 3) break;
      groups.push(after);
      g = after;
    }
    i = groups[groups.length - 1].end;
    if (groups[0].digits.length < 3) continue;
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
  const before = kindBefore(text, groups[0].at);
  const after = groups[last].end < text.length ? kindOf(text.codePointAt(groups[last].end)!) : Kind.Other;
  const joins: string[] = [];
  const join = (k: number) => (joins[k] ??= joinOf(text.slice(groups[k].end, groups[k + 1].at)));
  // A group touching a Latin letter is part of a word (an identifier, a digest, a UUID): never of a card.
  const lo = before === Kind.Letter ? 1 : 0;
  const hi = after === Kind.Letter ? last - 1 : last;
  for (let i = lo; i <= hi; i++) {
    let digits = '';
    for (let j = i; j <= hi; j++) {
      digits += groups[j].digits;
      const zeros = digits.length - digits.replace(/^0+/, '').length;
      const significant = digits.length - zeros;
      if (significant > 19) break;
      if (significant < 13 || !luhn(digits)) continue;
      const afterPlus = i === 0 && before === Kind.Plus;
      const phone = significant <= 15 && (afterPlus ? zeros === 0 : zeros === 1 || zeros === 2);
      let joined = true;
      for (let k = i + 1; k < j && joined; k++) joined = join(k) === join(i);
      if (!joined)
        joined = CARD_SHAPE.test(
          groups
            .slice(i, j + 1)
            .map((g) => g.digits.length)
            .join(','),
        );
      if (phone || !joined) continue;
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
