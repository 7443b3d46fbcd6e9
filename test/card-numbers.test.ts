import { describe, expect, it } from 'vitest';
import { hasCardNumber, redactCardData, redactLogLine } from '../src/lib/card-numbers.ts';

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
      'x4111111111111111y',
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
