import emojiRegex from 'emoji-regex';

const pattern = emojiRegex();
const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });

/**
 * Whether `s` is exactly one emoji (Unicode's RGI set through emoji-regex: skin tones, ZWJ
 * families and flags count as one; two emoji, text or an emoji with text around it do not).
 */
export function isSingleEmoji(s: string): boolean {
  if (s.length === 0 || s.length > 64) return false;
  const matches = [...s.matchAll(pattern)];
  return matches.length === 1 && matches[0][0] === s && [...graphemes.segment(s)].length === 1;
}
