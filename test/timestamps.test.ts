import { describe, expect, it } from 'vitest';
import { pgTimestampToIso } from '../src/lib/timestamps.ts';

const viaDate = (text: string) => new Date(text.replace(' ', 'T').replace(/\+00$/, 'Z'));

describe('PostgreSQL timestamptz text to ISO', () => {
  it('gives exactly what Date#toISOString gives, for every fraction length', () => {
    for (const text of [
      '2026-01-02 03:04:05+00',
      '2026-01-02 03:04:05.6+00',
      '2026-01-02 03:04:05.67+00',
      '2026-01-02 03:04:05.678+00',
      '2026-01-02 03:04:05.678999+00',
      '1999-12-31 23:59:59.999+00',
    ]) {
      expect(
        pgTimestampToIso(text, () => new Date(Number.NaN)),
        text,
      ).toBe(viaDate(text).toISOString());
    }
  });

  it('hands any other form to the parser', () => {
    const parse = (text: string) => new Date(Date.UTC(2026, 0, 2, text.includes('+02') ? 1 : 0));
    expect(pgTimestampToIso('2026-01-02 03:00:00+02', parse)).toBe('2026-01-02T01:00:00.000Z');
    expect(pgTimestampToIso('0044-03-15 12:00:00+00 BC', parse)).toBe('2026-01-02T00:00:00.000Z');
  });
});
