import type { Address } from '../entities/tenant.ts';
import { invalid } from '../lib/errors.ts';
import { toE164 } from '../lib/phone.ts';
import { clearable, text, z } from './write-input.ts';
import type { WriteContext } from './writes.ts';

/**
 * Addresses and phones in write bodies, the same for every resource that has them (patients,
 * clients, branches, calls): an address stored with every key, a phone in E.164 read with the
 * clinic's country.
 */
export const addressInput = z
  .strictObject({
    line1: clearable(text(200)).meta({ description: 'Street and number.' }),
    line2: clearable(text(200)).meta({ description: 'More of the address (apartment, floor, building).' }),
    city: clearable(text(100)).meta({ description: 'City or town.' }),
    postal_code: clearable(text(20)).meta({ description: 'Postal code.' }),
    country: clearable(text(2)).meta({ description: 'ISO 3166-1 alpha-2, e.g. IL.' }),
  })
  .meta({ description: 'A postal address; every part may be left out.' });

/** Stored with every key (null when not given), as the Address shape reads them. */
export const addressOf = (a: z.output<typeof addressInput> | null | undefined): Address | null =>
  a == null
    ? null
    : {
        line1: a.line1 ?? null,
        line2: a.line2 ?? null,
        city: a.city ?? null,
        postal_code: a.postal_code ?? null,
        country: a.country ?? null,
      };

/** A phone as stored (E.164 read with the clinic's country), or the 422 naming `param`. */
export function phoneOf(w: WriteContext, v: string | null | undefined, param: string): string | null {
  if (v == null || v.trim() === '') return null;
  const e164 = toE164(v, w.principal.country);
  if (!e164) throw invalid(param, `${param}: '${v}' is not a phone number.`);
  return e164;
}

/** A phone the body must give, in E.164, or the 422 naming `param`. */
export function requiredPhoneOf(w: WriteContext, v: string, param: string): string {
  const e164 = phoneOf(w, v, param);
  if (!e164) throw invalid(param, `${param}: '${v}' is not a phone number.`);
  return e164;
}
