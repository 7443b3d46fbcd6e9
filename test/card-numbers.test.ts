import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { hasCardNumber, redactCardData, redactLogLine } from '../src/lib/card-numbers.ts';
import { newRequestId } from '../src/lib/request-context.ts';
import { cardForms, digitZeros, PAN, showsCard } from './card-forms.ts';

/**
 * The one card-number rule (src/lib/card-numbers.ts, docs/decisions.md "Card numbers"): what is a
 * card number, and what is left alone because a clinic writes it every day.
 */
describe('the card-number rule', () => {
  it('finds Luhn-valid 13–19 digit card numbers, bare or grouped by spaces or dashes', () => {
    for (const s of [
      'card 4111111111111111 cvv 8531',
      '4111 1111 1111 1111',
      'paid with 4111-1111-1111-1111.',
      'amex 3782 822463 10005',
      '6011000990139424',
      '4222222222222',
      'card 4111 1111 1111 1111 123 (code after it)',
      'Visa 4111 1111 1111 1111',
      'card:4111111111111111',
      'card#4111111111111111',
    ])
      expect(hasCardNumber(s), s).toBe(true);
  });

  it('leaves phone numbers, tooth lists, order numbers and other long digit runs alone', () => {
    for (const s of [
      // Fails the Luhn check (an order number).
      'order 4111111111111112',
      'ref 1234567890123456',
      // More than 19 digits: a long reference, not a card.
      'ref 41111111111111111111',
      // Phones: international after +, local starting with 0.
      'call +972 50 123 4567 or +49 1512 3456789 or +44 7911 123456',
      'call 0049 1512 34567893',
      // Teeth (groups of one or two digits never join one).
      'teeth 18 17 16 15 14 13 12 11 21 22 23 24 25 26 27 28',
      'dates 2026-11-20 and 2026-12-01',
      'cvv 853',
      // A list of phone numbers is not one long number (mixed separators, not a card's groups).
      'call 050-123-4567, 052-765-4321 or 03-555-0100',
      // An international prefix before at most 15 digits (E.164's longest): a phone number.
      'call 00378282246310005',
      // Digits inside a word are part of an identifier, a digest, a UUID: letters on both
      // sides, a long word, or letters and digits mixed.
      'x4111111111111111y',
      'Migration20261127000002Events',
      'Migration4111111111111111',
      'ab3f4111111111111111',
      '4111111111111111ab3f',
      'ba4eb602-7231-4888-985d-34c590cd130d',
      'abcd4111-1111-1111-1111-34c590cd130d',
    ])
      expect(hasCardNumber(s), s).toBe(false);
  });

  describe.each(cardForms)('written with $name', ({ text, pan }) => {
    it('is a card number, alone and in a sentence', () => {
      for (const s of [text, `paid with ${text} yesterday`, `${text}\n`, `(${text})`])
        expect(hasCardNumber(s), JSON.stringify(s)).toBe(true);
    });

    it('is removed from a message and from a log line, the line staying JSON', () => {
      const message = redactCardData(`Variable "$input" got invalid value "${text}" at "input.note"`);
      expect(message).toContain('[card number removed]');
      expect(showsCard(message, pan), message).toBe(false);
      // As a log line holds it: in a message, in a URL path (percent-encoded as a client sends
      // it, or as typed), and quoted again inside a message (JSON-escaped twice).
      const line = JSON.stringify({
        time: 1764072000128,
        msg: `note ${text} end`,
        route: `/v1/patients/${encodeURIComponent(text)}`,
        raw: `/v1/patients/${text}`,
        err: JSON.stringify({ value: text }),
      });
      const out = redactLogLine(line);
      const parsed = JSON.parse(out);
      for (const [k, v] of Object.entries(parsed))
        if (typeof v === 'string') expect(showsCard(v, pan), `${k}: ${v}`).toBe(false);
      // What is around the number stays (a plus sign, a brand, parentheses, the code after it).
      expect(parsed.msg).toMatch(/^note \D*\[card number removed\]\D*( 123)? end$/);
      expect(parsed.route).toContain('[card number removed]');
      expect(parsed.time).toBe(1764072000128);
    });
  });

  it('reads the digits of every script Unicode has', () => {
    expect(digitZeros.length).toBeGreaterThan(60);
    for (const zero of digitZeros) {
      const digits = [...PAN].map((d) => String.fromCodePoint(zero + Number(d))).join('');
      expect(hasCardNumber(`card ${digits}`), `U+${zero.toString(16)}`).toBe(true);
      expect(hasCardNumber(`order ${digits.slice(0, -1)}${String.fromCodePoint(zero + 2)}`)).toBe(false);
    }
  });

  it('leaves our own identifiers alone: migration names, digests, UUIDs, request lines', () => {
    const names = readdirSync(new URL('../migrations', import.meta.url)).filter((f) =>
      f.startsWith('Migration'),
    );
    expect(names.length).toBeGreaterThan(10);
    const words = [
      ...names,
      ...names.map((f) => f.replace(/\.ts$/, '')),
      'Migration[card number removed]Events'.replace('[card number removed]', '20251101000000'),
      ...Array.from({ length: 300 }, (_, i) => createHash('sha256').update(String(i)).digest('hex')),
      ...Array.from({ length: 300 }, (_, i) => createHash('sha1').update(String(i)).digest('hex')),
      ...Array.from({ length: 100 }, () => randomUUID()),
      ...Array.from({ length: 100 }, () => randomUUID().toUpperCase()),
      ...Array.from({ length: 300 }, () => newRequestId()),
      ...Array.from({ length: 100 }, () => randomBytes(32).toString('base64url')),
      'evt_104233',
      'Migration20261122000000',
    ];
    for (const w of words) {
      expect(redactCardData(w), w).toBe(w);
      const line = JSON.stringify({ level: 30, time: 1764072000128, msg: `Processing '${w}'`, id: w });
      expect(redactLogLine(line), w).toBe(line);
    }
  });

  it('phone numbers, with + or 00 or a trunk 0, stay phone numbers; zeros pad anything longer', () => {
    for (const s of [
      '+972 50 123 4567',
      '00972501234567',
      '0049 1512 34567893',
      '+491512345678937',
      '0501234567',
    ])
      expect(hasCardNumber(s), s).toBe(false);
    // 16 digits are no phone number, whatever is before them.
    for (const s of [`+${PAN}`, `00${PAN}`, `0${PAN}`, `0000000000${PAN}`])
      expect(hasCardNumber(s), s).toBe(true);
    // A trunk 0 is before at most 12 digits: one 0 before 13 to 15 is padding, not a phone number.
    for (const s of ['0378282246310005', '04222222222222', '0 378282246310005', '000378282246310005'])
      expect(hasCardNumber(s), s).toBe(true);
    // The gap left for international numbers: a 13–15 digit card behind exactly `00`.
    expect(hasCardNumber('00378282246310005')).toBe(false);
  });

  it('leaves everyday text alone, whatever separates its numbers', () => {
    // Deterministic "random" numbers: the same cases every run.
    let seed = 34;
    const digit = () => {
      seed = (seed * 48271) % 2147483647;
      return seed % 10;
    };
    const digits = (n: number) => Array.from({ length: n }, digit).join('');
    const seps = [
      ', ',
      ',',
      '; ',
      ';',
      ' | ',
      '|',
      ' / ',
      '/',
      ' ',
      '  ',
      '\n',
      ' \u30fb ',
      ' - ',
      ' or ',
      ' * ',
    ];
    const texts: string[] = [];
    for (let i = 0; i < 400; i++) {
      const sep = seps[i % seps.length];
      // Lists of phone numbers: local with their trunk 0 (Israeli mobiles and landlines, a UK
      // mobile, a German one), bare or grouped, and international ones after + or 00.
      texts.push(
        [`05${digits(8)}`, `05${digits(8)}`].join(sep),
        [`03${digits(7)}`, `04${digits(7)}`, `08${digits(7)}`].join(sep),
        [`07${digits(9)}`, `015${digits(9)}`].join(sep),
        [`05${digits(1)}-${digits(3)}-${digits(4)}`, `05${digits(1)}-${digits(3)}-${digits(4)}`].join(sep),
        [`(05${digits(1)}) ${digits(3)}-${digits(4)}`, `(05${digits(1)}) ${digits(3)}-${digits(4)}`].join(
          sep,
        ),
        [`+972 5${digits(1)} ${digits(3)} ${digits(4)}`, `+972-5${digits(1)}-${digits(7)}`].join(sep),
        [`+9725${digits(8)}`, `+9725${digits(8)}`, `+447${digits(9)}`].join(sep),
        [`009725${digits(8)}`, `00447${digits(9)}`].join(sep),
        // Dates, times, money, tooth lists.
        [`2026-11-${10 + (i % 19)} 12:${digits(1)}0:4${digits(1)}`, `28.11.2026 09:15`].join(sep),
        [
          `${digits(1)},${digits(3)},${digits(3)}.${digits(2)}`,
          `₪${digits(3)},${digits(3)}.${digits(2)}`,
        ].join(sep),
        ['18', '17', '16', '15', '14', '13', '12', '11', '21', '22'].join(sep),
        ['41', '11', '11', '11', '11', '11', '11', '11'].join(sep),
      );
    }
    texts.push(
      'call 050-123-4567 | 052-765-4321 | 03-555-0100',
      'call (050) 123-4567; (052) 765-4321; 03*555*0100',
      'tel: 050-1234567 ・ 052-7654321',
      'at 2026-11-28 12:30:45 and 2026-11-28T12:30:45.123Z, on 28/11/2026 at 12:30',
      'times 08:30-09:15, 09:15-10:00, 10:00~10:45',
      'paid 1,234,567.89 of 12,345,678.90 (1 234 567,89 €; 1.234.567,89 EUR; 1\u2009234\u2009567)',
      'teeth 18|17|16|15; 11:21:31:41; 41 11 11 11 11 11 11 11; 11-18, 21-28',
      'order 4111111111111112 | ref 41111111111111111111 | invoice #2026-000123',
      'ids pat_12, evt_104233, appt_7: req_3kTq9xYb2mN1 ~ wh_7 = whd_1042',
    );
    for (const s of texts) {
      expect(hasCardNumber(s), JSON.stringify(s)).toBe(false);
      expect(redactCardData(s), JSON.stringify(s)).toBe(s);
    }
  });

  it('a card number glued to a short word is a card number; digits in an identifier are not', () => {
    for (const s of [
      `Visa${PAN}`,
      `VISA${PAN}.`,
      `card${PAN}`,
      `cc${PAN}`,
      `no${PAN}`,
      `${PAN}x`,
      `paid:Amex378282246310005`,
      `a${PAN.replace(/(\d{4})(?!$)/g, '$1 ')}`,
      `Visa4111-1111-1111-1111`,
      '4111 1111 1111 1111x',
    ])
      expect(hasCardNumber(s), s).toBe(true);
    for (const s of [
      // Letters on both sides, a word longer than a short one, letters and digits mixed.
      `Migration${PAN}Initial`,
      `Migration${PAN}`,
      `3f${PAN}`,
      `${PAN}a3`,
      `a1b${PAN}`,
      // A hex word of four letters or more before grouped digits (a UUID's first segment).
      'abcd4111-1111-1111-1111-34c590cd130d',
    ])
      expect(hasCardNumber(s), s).toBe(false);
  });

  it('redacts card numbers and named security codes in messages', () => {
    expect(
      redactCardData('Variable "$card" got invalid value { number: "4111111111111111", cvv: "8531" }'),
    ).toBe('Variable "$card" got invalid value { number: "[card number removed]", cvv: "[removed]" }');
    expect(redactCardData('card 4111 1111 1111 1111 123, CVC: 853, security code 8531')).toBe(
      'card [card number removed] 123, CVC: [removed], security code [removed]',
    );
    expect(redactCardData('order 4111111111111112 and 3 items')).toBe('order 4111111111111112 and 3 items');
  });

  it('redacts string values of a log line, never its numbers', () => {
    const line = JSON.stringify({
      time: 1764072000128, // Luhn-valid, as a tenth of them are
      route: '/v1/patients/4111111111111111',
      msg: 'Variable "$card" got invalid value { cvv: "8531" }',
      body: { cvv: '853' },
    });
    const out = JSON.parse(redactLogLine(line));
    expect(out).toEqual({
      time: 1764072000128,
      route: '/v1/patients/[card number removed]',
      msg: 'Variable "$card" got invalid value { cvv: "[removed]" }',
      body: { cvv: '[removed]' },
    });
  });
});
