import { isUtf8 } from 'node:buffer';
import { AppError } from './errors.ts';

/**
 * Checks JSON text before it is parsed and walked: nested no deeper than `maxDepth` (the
 * idempotency canonicaliser, the services' checks and anything else that recurses over a body
 * must never meet 200,000 levels), and, unless `nul` is false, no string holding U+0000, which
 * PostgreSQL cannot store (it answers a protocol error that looks like an outage). One pass, no
 * recursion; only structure outside strings counts. Text that is not JSON passes: JSON.parse
 * judges it.
 *
 * A lone UTF-16 surrogate (`"\ud800"` not followed by its low half, or a low half alone) is
 * refused too, always: it is no character, and the driver would store U+FFFD in its place
 * without a word. `under` names the member whose members are the params (GraphQL's
 * `variables`), so the error names `input.note`, not `variables.input.note`.
 */
export function checkJsonText(
  text: string,
  maxDepth: number,
  opts: { nul?: boolean; under?: string } = {},
): void {
  const checkNul = opts.nul ?? true;
  let depth = 0;
  // The member names on the way to the current value, for the error's `param`.
  const names: string[] = [];
  let bad: 'nul' | 'surrogate' | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      const start = i + 1;
      for (i = start; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x22) break;
        if (d === 0x5c) {
          if (text.charCodeAt(i + 1) === 0x75) {
            const unit = hexUnit(text, i + 2);
            if (checkNul && unit === 0) bad = 'nul';
            else if (unit >= 0xd800 && unit <= 0xdbff) {
              // A high half is a character only with its low half escaped right after it.
              const low =
                text.charCodeAt(i + 6) === 0x5c && text.charCodeAt(i + 7) === 0x75
                  ? hexUnit(text, i + 8)
                  : -1;
              if (low >= 0xdc00 && low <= 0xdfff) i += 6;
              else bad = 'surrogate';
            } else if (unit >= 0xdc00 && unit <= 0xdfff) bad = 'surrogate';
          }
          i++;
        }
      }
      const isName = /^\s*:/.test(text.slice(i + 1, i + 17));
      if (isName) names[depth] = decode(text.slice(start, i));
      if (bad) {
        // The member's path; for one in a member's name, its parent's.
        const skip = opts.under !== undefined && names[1] === opts.under ? 2 : 1;
        const param =
          names
            .slice(skip, isName ? depth : depth + 1)
            .filter(Boolean)
            .join('.') || undefined;
        throw new AppError(
          'validation_failed',
          bad === 'nul'
            ? `${param ?? 'The body'} contains U+0000 (NUL), which is not allowed in text.`
            : `${param ?? 'The body'} contains a lone UTF-16 surrogate (an unpaired \\uD800–\\uDFFF escape), which is no character; send the text as valid Unicode.`,
          param ? { param } : {},
        );
      }
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > maxDepth)
        throw new AppError(
          'invalid_request',
          `The body's JSON is nested deeper than ${maxDepth} levels of arrays and objects.`,
        );
      names[depth] = '';
    } else if (c === 0x7d || c === 0x5d) {
      names.length = Math.max(depth, 0);
      depth--;
    }
  }
}

/** The UTF-16 unit of the four hex digits at `at`, or -1. */
function hexUnit(text: string, at: number): number {
  const hex = text.slice(at, at + 4);
  return /^[0-9a-fA-F]{4}$/.test(hex) ? Number.parseInt(hex, 16) : -1;
}

/**
 * A request body's bytes as text: not valid UTF-8 (a lone surrogate encoded as bytes, a stray
 * byte) is a 400, where decoding would have put U+FFFD in its place without a word.
 */
export function utf8Text(body: Buffer): string {
  if (!isUtf8(body)) throw new AppError('invalid_request', 'The body is not valid UTF-8.');
  return body.toString('utf8');
}

const decode = (raw: string) => {
  if (!raw.includes('\\')) return raw;
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return raw;
  }
};

/** Parses a request's JSON body after checkJsonText; empty text is `{}`. */
export function parseJsonBody(text: string, maxDepth: number): unknown {
  if (text.trim() === '') return {};
  checkJsonText(text, maxDepth);
  try {
    return JSON.parse(text);
  } catch {
    throw new AppError('invalid_request', 'The body is not valid JSON.');
  }
}
