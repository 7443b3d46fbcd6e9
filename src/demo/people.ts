import type { Address } from '../entities/tenant.ts';
import { foldForSearch } from '../lib/text.ts';
import type { Rng } from './random.ts';

// Mostly Hebrew names in their usual English spelling, plus a few accented ones so that
// accent-insensitive search ("eva" finds "Éva") has something to find.
// Lists as split strings: one name per line would make this file mostly line breaks.
const femaleNames = words(
  'Noa Tamar Yael Maya Shira Avigail Michal Dana Roni Adi Hadas Efrat Rivka Sarah Leah Rachel Talia Ayelet ' +
    'Inbal Keren Liat Orly Sivan Galit Éva Zoë Renée Chloé Noémie Léa Inès Ágnes',
);
const maleNames = words(
  'Yosef David Moshe Itai Omer Eitan Yonatan Ariel Lior Amit Noam Ori Daniel Yaakov Avraham Tzvi Chaim Shlomo ' +
    'Meir Yitzhak Nir Gal Uri Elad José André Raphaël Jérôme Mátyás',
);
const lastNames = words(
  'Cohen Levi Mizrahi Peretz Biton Dahan Avraham Friedman Malka Azulay Katz Yosef Amar Ohayon Hadad Gabay ' +
    'Ben-David Shapiro Goldberg Ben-Ami Rosenberg Klein Shalom Vaknin Elbaz Sasson Navon Ashkenazi Weiss Halevi ' +
    'Pérez Núñez Lefèvre Müller Szabó Kovács Côté Dvořák',
);
const streets = words(
  'Herzl,Rothschild Blvd,Dizengoff,Ben Yehuda,Jabotinsky,Weizmann,Allenby,HaNasi,Ibn Gabirol,King George,Bialik,' +
    "Sokolov,HaYarkon,Arlozorov,Emek Refaim,HaNevi'im",
  ',',
);
/** City and the first digits of its 7-digit postal codes. */
const cities = words(
  "Tel Aviv-Yafo:6,Jerusalem:9,Haifa:3,Ramat Gan:52,Petah Tikva:49,Rishon LeZion:75,Herzliya:46,Be'er Sheva:84," +
    "Netanya:42,Holon:58,Ra'anana:43,Modi'in:71",
  ',',
).map((c) => {
  const [city, postal] = c.split(':');
  return { city, postal };
});

function words(list: string, sep = ' '): string[] {
  return list.split(sep);
}

const emailDomains = ['example.com', 'example.org', 'example.net'] as const;

export type Gender = 'male' | 'female';

export interface Person {
  firstName: string;
  lastName: string;
  gender: Gender;
  /** E.164 Israeli mobile. */
  phone: string;
  email: string;
  address: Address;
  idNumber: string;
}

export function personName(rng: Rng, gender: Gender = rng.chance(0.5) ? 'female' : 'male') {
  return {
    firstName: rng.pick(gender === 'female' ? femaleNames : maleNames),
    lastName: rng.pick(lastNames),
    gender,
  };
}

/** Israeli mobile numbers (050, 052, 053, 054, 058) in E.164, as the service stores phones. */
export function mobilePhone(rng: Rng): string {
  return `+9725${rng.pick([0, 2, 3, 4, 8])}${rng.digits(7)}`;
}

export function emailFor(rng: Rng, first: string, last: string): string {
  const ascii = (s: string) => foldForSearch(s).replace(/[^a-z0-9]/g, '');
  const suffix = rng.chance(0.4) ? String(rng.int(1, 99)) : '';
  return `${ascii(first)}.${ascii(last)}${suffix}@${rng.pick(emailDomains)}`;
}

export function address(rng: Rng): Address {
  const c = rng.pick(cities);
  return {
    line1: `${rng.int(1, 180)} ${rng.pick(streets)} St`,
    line2: rng.chance(0.6) ? `Apt ${rng.int(1, 40)}` : null,
    city: c.city,
    postal_code: (c.postal + rng.digits(7)).slice(0, 7),
    country: 'IL',
  };
}

/** A 9-digit Israeli ID number with a valid check digit (what clinics keep as id_number). */
export function israeliId(rng: Rng): string {
  const body = rng.digits(8);
  let sum = 0;
  for (let i = 0; i < 8; i++) {
    const d = Number(body[i]) * (i % 2 === 0 ? 1 : 2);
    sum += d > 9 ? d - 9 : d;
  }
  return body + String((10 - (sum % 10)) % 10);
}

export function person(rng: Rng): Person {
  const name = personName(rng);
  return {
    ...name,
    phone: mobilePhone(rng),
    email: emailFor(rng, name.firstName, name.lastName),
    address: address(rng),
    idNumber: israeliId(rng),
  };
}

/** YYYY-MM-DD of a birthday between minAge and maxAge years before `now`. */
export function birthDate(rng: Rng, now: Date, minAge: number, maxAge: number): string {
  const days = rng.int(Math.round(minAge * 365.25), Math.round(maxAge * 365.25));
  return new Date(now.getTime() - days * 86_400_000).toISOString().slice(0, 10);
}

export const petNames = {
  female: words('Luna Bella Nala Mitzi Coco Kushi Bamba Lola Zoë Chloé Daisy Pitzi'),
  male: words('Rex Max Simba Shoko Lucky Charlie Gizmo Milo Loki Oreo Rocky Toffee'),
};

/** A 15-digit ISO 11784 microchip number (985 = a manufacturer code), kept as the animal's id_number. */
export function microchip(rng: Rng): string {
  return `985${rng.digits(12)}`;
}
