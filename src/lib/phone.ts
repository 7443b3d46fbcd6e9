import { type CountryCode, isSupportedCountry, parsePhoneNumberFromString } from 'libphonenumber-js';

/** A country whose phone numbering we know: a clinic's local `0…` numbers parse only with one. */
export function isPhoneCountry(code: string): boolean {
  return /^[A-Z]{2}$/.test(code) && isSupportedCountry(code);
}

/**
 * Phones are stored in E.164 and parsed with the clinic's country, so "050-123 4567",
 * "+972 50 123 4567" and "972501234567" are the same number at an Israeli clinic.
 * A query string's "+" often arrives decoded as a space; a leading space before digits is
 * therefore read as "+".
 */
export function toE164(input: string, country: string): string | null {
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
}

/** By country, then number: no key string is built per call (several calls per chat message). */
const localCache = new Map<string, Map<string, string>>();
let cached = 0;

/**
 * Local form with the national prefix and no separators, e.g. 0501234567 at an Israeli clinic.
 * Memoised: every listed patient and owner goes through here, and parsing costs ~10 µs.
 */
export function toLocal(e164: string | null | undefined, country: string): string | null {
  if (!e164) return null;
  let byNumber = localCache.get(country);
  if (!byNumber) {
    byNumber = new Map();
    localCache.set(country, byNumber);
  }
  let local = byNumber.get(e164);
  if (local === undefined) {
    const parsed = parsePhoneNumberFromString(e164);
    local = !parsed
      ? e164
      : parsed.country && parsed.country !== country
        ? parsed.number
        : parsed.formatNational().replace(/[^\d]/g, '');
    if (++cached > 100_000) {
      localCache.clear();
      cached = 0;
      byNumber = new Map();
      localCache.set(country, byNumber);
    }
    byNumber.set(e164, local);
  }
  return local;
}

/** International digits without "+", as the messaging network shows them (972501234567). */
export function toInternational(e164: string | null | undefined): string | null {
  return e164 ? e164.replace(/^\+/, '') : null;
}
