/**
 * Every way of writing a card number that issue 34 found accepted (and the two that were not),
 * for the table-driven tests of the card-number rule (test/card-numbers.test.ts,
 * test/card-free-text.test.ts), and a check of whether a text holds a card's digits that does not
 * use the rule itself.
 */
export const PAN = '4111111111111111';
export const AMEX = '378282246310005';

const grouped = (sep: string) => ['4111', '1111', '1111', '1111'].join(sep);
const everyDigit = (sep: string) => [...PAN].join(sep);
/** The number in another script's digits (`zero`: that script's digit zero). */
const inScript = (zero: number, s = PAN) =>
  s.replace(/[0-9]/g, (d) => String.fromCodePoint(zero + Number(d)));

export interface CardForm {
  name: string;
  text: string;
  /** The card number it writes (ASCII digits). */
  pan: string;
}

export const cardForms: CardForm[] = (
  [
    ['bare', PAN],
    ['spaces', grouped(' ')],
    ['dashes', grouped('-')],
    ['dots', grouped('.')],
    ['slashes', grouped('/')],
    ['underscores', grouped('_')],
    ['commas', grouped(',')],
    ['commas and spaces', grouped(', ')],
    ['double spaces', grouped('  ')],
    ['spaced dashes', grouped(' - ')],
    ['no-break spaces', grouped('\u00a0')],
    ['thin spaces', grouped('\u2009')],
    ['narrow no-break spaces', grouped('\u202f')],
    ['ideographic spaces', grouped('\u3000')],
    ['zero-width spaces', grouped('\u200b')],
    ['a zero-width space between every digit', everyDigit('\u200b')],
    ['a zero-width non-joiner between every digit', everyDigit('\u200c')],
    ['a zero-width joiner between every digit', everyDigit('\u200d')],
    ['a word joiner between every digit', everyDigit('\u2060')],
    ['a BOM between every digit', everyDigit('\ufeff')],
    ['right-to-left marks and spaces', grouped('\u200f \u200f')],
    ['tabs', grouped('\t')],
    ['newlines', grouped('\n')],
    ['CRLFs', grouped('\r\n')],
    ['en dashes', grouped('\u2013')],
    ['em dashes', grouped('\u2014')],
    ['minus signs', grouped('\u2212')],
    ['mixed separators in a card’s groups', '4111 1111-1111.1111'],
    ['fullwidth digits', inScript(0xff10)],
    ['fullwidth digits and full stops', inScript(0xff10, grouped('\uff0e'))],
    ['Arabic-Indic digits', inScript(0x660)],
    ['Arabic-Indic digits and Arabic commas', inScript(0x660, grouped('\u060c'))],
    ['Persian digits', inScript(0x6f0)],
    ['Devanagari digits', inScript(0x966)],
    ['mathematical bold digits', inScript(0x1d7ce)],
    ['mixed scripts', `41${inScript(0x660, '11')}1111${inScript(0xff10, '1111')}1111`],
    ['leading zeros', `000${PAN}`],
    ['one leading zero', `0${PAN}`],
    ['leading zeros in a group', `0004111 1111 1111 1111`],
    ['after a plus sign (no phone number has 16 digits)', `+${PAN}`],
    ['Amex, dotted', '3782.822463.10005', AMEX],
    ['Amex, fullwidth', inScript(0xff10, '3782 822463 10005'), AMEX],
    ['with its security code after it', `${grouped('.')} 123`],
    // Any run of characters that are neither letters nor digits separates groups (a review of issue 34).
    ['pipes', grouped('|')],
    ['spaced pipes', grouped(' | ')],
    ['colons', grouped(':')],
    ['semicolons', grouped(';')],
    ['asterisks', grouped('*')],
    ['tildes', grouped('~')],
    ['equals signs', grouped('=')],
    ['plus signs', grouped('+')],
    ['quotes', grouped('"')],
    ['katakana middle dots', grouped('\u30fb')],
    ['arrows', grouped('\u2192')],
    ['parentheses', '(4111)(1111)(1111)(1111)'],
    ['brackets and spaces', '[4111] [1111] [1111] [1111]'],
    ['Hangul fillers between groups', grouped('\u3164')],
    ['one leading zero before an Amex', `0${AMEX}`, AMEX],
    // Glued to a short word on one side: a card number, not an identifier.
    ['glued after a brand', `Visa${PAN}`],
    ['glued after a short word', `cc${PAN}`],
    ['glued before a letter', `${PAN}x`],
    ['glued after a letter, grouped', `a${grouped(' ')}`],
    ['glued after a brand, grouped', `Visa${grouped('-')}`],
  ] as [string, string, string?][]
).map(([name, text, pan]) => ({ name, text, pan: pan ?? PAN }));

/** Each Unicode decimal digit's value: the distance from the first digit of its block of ten. */
const digitValue = (() => {
  const values = new Map<number, number>();
  let start = -1;
  for (let cp = 0; cp < 0x20000; cp++) {
    if (!/\p{Nd}/u.test(String.fromCodePoint(cp))) {
      start = -1;
      continue;
    }
    if (start < 0) start = cp;
    values.set(cp, (cp - start) % 10);
  }
  return values;
})();

/**
 * The digits a text shows, in order and in ASCII, with percent and JSON escapes (even escaped
 * twice) read first and everything that is not a digit dropped: a card number's digits in any of
 * the forms above come out as one run.
 */
export function digitsShown(text: string): string {
  const unescaped = text
    .replace(/\\+u([0-9a-fA-F]{4})/g, (_, h) => String.fromCharCode(Number.parseInt(h, 16)))
    .replace(/(?:%[0-9a-fA-F]{2})+/g, (s) => {
      try {
        return decodeURIComponent(s);
      } catch {
        return s;
      }
    });
  let out = '';
  for (const ch of unescaped) {
    const v = digitValue.get(ch.codePointAt(0)!);
    if (v !== undefined) out += v;
  }
  return out;
}

/** Whether `text` shows the digits of `pan` (leading zeros or not). */
export const showsCard = (text: string, pan: string) => digitsShown(text).includes(pan);

/** The zero of every block of Unicode decimal digits. */
export const digitZeros = [...digitValue].filter(([, v]) => v === 0).map(([cp]) => cp);
