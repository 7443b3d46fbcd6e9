/**
 * Text as it reaches the card-number rule (src/lib/card-numbers.ts) may carry its digits escaped:
 * JSON escapes (`\\u0034`, maybe escaped again) and percent escapes (UTF-8 bytes). Reading them
 * back, with where each character came from, lets the rule find a number written that way and
 * mask it where it stands in the original.
 */
/** Percent escapes and JSON escapes (a backslash, maybe itself escaped, and `t`, `n`, … or `uXXXX`). */
const ENCODED = /\\+(?:u[0-9a-fA-F]{4}|[tnrfbv])|(?:%[0-9a-fA-F]{2})+/g;
/** Strict, and keeping a BOM (an invisible character the rule reads as absent, not one to drop). */
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const CONTROL_ESCAPES: Record<string, string> = { t: '\t', n: '\n', r: '\r', f: '\f', b: '\b', v: '\v' };

/** Whether `text` has an escape `decodeEscapes` reads. */
export const hasEscapes = (text: string): boolean =>
  /\\+(?:u[0-9a-fA-F]{4}|[tnrfbv])|%[0-9a-fA-F]{2}/.test(text);

/**
 * `text` with its escapes read as the characters they stand for, and where each of its UTF-16
 * units came from in `text` (`from[i]`; `from[length]` is the end).
 */
export function decodeEscapes(text: string): { text: string; from: number[] } {
  let out = '';
  const from: number[] = [];
  let last = 0;
  const literal = (a: number, b: number) => {
    out += text.slice(a, b);
    for (let i = a; i < b; i++) from.push(i);
  };
  for (const m of text.matchAll(ENCODED)) {
    literal(last, m.index);
    last = m.index + m[0].length;
    const s = m[0];
    if (s[0] === '\\') {
      const tail = s.slice(s.lastIndexOf('\\') + 1);
      out +=
        tail[0] === 'u' ? String.fromCharCode(Number.parseInt(tail.slice(1), 16)) : CONTROL_ESCAPES[tail];
      from.push(m.index);
      continue;
    }
    // Percent escapes: UTF-8 bytes; a sequence that is not UTF-8 stays as written.
    const bytes = s
      .slice(1)
      .split('%')
      .map((h) => Number.parseInt(h, 16));
    for (let i = 0; i < bytes.length; ) {
      const b = bytes[i];
      const n =
        b < 0x80 ? 1 : b >= 0xc2 && b < 0xe0 ? 2 : b >= 0xe0 && b < 0xf0 ? 3 : b >= 0xf0 && b < 0xf5 ? 4 : 0;
      const at = m.index + i * 3;
      let ch = '';
      if (n && i + n <= bytes.length) {
        try {
          ch = UTF8.decode(Uint8Array.from(bytes.slice(i, i + n)));
        } catch {}
      }
      if (ch) {
        out += ch;
        for (let k = 0; k < ch.length; k++) from.push(at);
        i += n;
      } else {
        literal(at, at + 3);
        i += 1;
      }
    }
  }
  literal(last, text.length);
  from.push(text.length);
  return { text: out, from };
}
