import { AppError } from './errors.ts';

/**
 * Checks JSON text before it is parsed and walked: nested no deeper than `maxDepth` (the
 * idempotency canonicaliser, the services' checks and anything else that recurses over a body
 * must never meet 200,000 levels), and, unless `nul` is false, no string holding U+0000, which
 * PostgreSQL cannot store (it answers a protocol error that looks like an outage). One pass, no
 * recursion; only structure outside strings counts. Text that is not JSON passes: JSON.parse
 * judges it.
 */
export function checkJsonText(text: string, maxDepth: number, opts: { nul?: boolean } = {}): void {
  const checkNul = opts.nul ?? true;
  let depth = 0;
  // The member names on the way to the current value, for the error's `param`.
  const names: string[] = [];
  let nul = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      const start = i + 1;
      for (i = start; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x22) break;
        if (d === 0x5c) {
          if (checkNul && text.charCodeAt(i + 1) === 0x75 && text.startsWith('0000', i + 2)) nul = true;
          i++;
        }
      }
      const isName = /^\s*:/.test(text.slice(i + 1, i + 17));
      if (isName) names[depth] = decode(text.slice(start, i));
      if (nul) {
        // The member's path; for a NUL in a member's name, its parent's.
        const param =
          names
            .slice(1, isName ? depth : depth + 1)
            .filter(Boolean)
            .join('.') || undefined;
        throw new AppError(
          'validation_failed',
          `${param ?? 'The body'} contains U+0000 (NUL), which is not allowed in text.`,
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
