import { type CountryCode, isSupportedCountry, parsePhoneNumberFromString } from 'libphonenumber-js';

/** A country whose phone numbering we know: a clinic's local `0…` numbers parse only with one. */
export function isPhoneCountry(code: string): boolean {
  return /^[A-Z]{2}$/.test(code) && isSupportedCountry(code);
}

/**
 * Memoised per country, then input: no key string is built per call (several calls per chat
 * message), and parsing costs ~10 µs. The same numbers come back (a listed patient's phone, the
 * caller a phone system looks up on every call); the whole cache is dropped past MEMO_MAX entries.
 */
const MEMO_MAX = 100_000;
function memoByCountry<R>(
  parse: (input: string, country: string) => R,
): (input: string, country: string) => R {
  const byCountry = new Map<string, Map<string, R>>();
  let size = 0;
  return (input, country) => {
    let known = byCountry.get(country);
    if (!known) {
      known = new Map();
      byCountry.set(country, known);
    }
    if (known.has(input)) return known.get(input) as R;
    const value = parse(input, country);
    if (++size > MEMO_MAX) {
      byCountry.clear();
      size = 1;
      known = new Map();
      byCountry.set(country, known);
    }
    known.set(input, value);
    return value;
  };
}

/**
 * Phones are stored in E.164 and parsed with the clinic's country, so "050-123 4567",
 * "+972 50 123 4567" and "972501234567" are the same number at an Israeli clinic.
 * A query string's "+" often arrives decoded as a space; a leading space before digits is
 * therefore read as "+".
 */
export const toE164 = memoByCountry((input: string, country: string): string | null => {
  let raw = input;
  if (/^\s+\d/.test(raw)) raw = `+${raw.trimStart()}`;
  raw = raw.trim();
  if (!raw) return null;
  const digits = raw.replace(/[^\d+]/g, '');
  const cc = country as CountryCode;
  const parsed =
    parsePhoneNumberFromString(raw, cc) ??
    (digits.startsWith('+') ? undefined : parsePhoneNumberFromString(`+${digits}`));
  if (parsed?.isPossible()) {
    // A bare international number without "+" ("972501234567") parses as a long national one.
    if (!digits.startsWith('+') && !digits.startsWith('0') && parsed.country === cc) {
      const intl = parsePhoneNumberFromString(`+${digits}`);
      if (intl?.isPossible() && !parsed.isValid() && intl.isValid()) return intl.number;
    }
    return parsed.number;
  }
  return null;
});

const localOf = memoByCountry((e164: string, country: string): string => {
  const parsed = parsePhoneNumberFromString(e164);
  return !parsed
    ? e164
    : parsed.country && parsed.country !== country
      ? parsed.number
      : parsed.formatNational().replace(/[^\d]/g, '');
});

/**
 * Local form with the national prefix and no separators, e.g. 0501234567 at an Israeli clinic.
 * Every listed patient and owner goes through here.
 */
export function toLocal(e164: string | null | undefined, country: string): string | null {
  return e164 ? localOf(e164, country) : null;
}

/** International digits without "+", as the messaging network shows them (972501234567). */
export function toInternational(e164: string | null | undefined): string | null {
  return e164 ? e164.replace(/^\+/, '') : null;
}
