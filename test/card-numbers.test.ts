import { createHash, randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { hasCardNumber, redactCardData, redactLogLine } from '../src/lib/card-numbers.ts';
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
      // Digits touching a Latin letter are part of a word: an identifier, a digest, a UUID.
      'x4111111111111111y',
      'Migration20261127000002Events',
      'Visa4111111111111111',
      'Visa4111 1111 1111 1111',
      'ba4eb602-7231-4888-985d-34c590cd130d',
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
      expect(parsed.msg).toMatch(/^note \+?\[card number removed\]( 123)? end$/);
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
