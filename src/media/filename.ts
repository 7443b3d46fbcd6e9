/**
 * The name a patient sees for a document (spec, Chat: write: `media.filename`, documents only;
 * defaults to the URL's file name; `.pdf` appended when missing). The rules, in order, for the
 * given name and then the URL's (the first that leaves a usable name wins; else `document.pdf`):
 * 1. Unicode NFC; control characters (C0, DEL, C1) and bidirectional controls (which can make
 *    `fdp.exe` read as `exe.pdf`) removed;
 * 2. each path separator (`/`, `\`) becomes `_`, so no text is lost and no path survives;
 * 3. runs of white space become one space; white space trimmed at both ends, and dots and spaces
 *    at the end (a name ending in `.pdf.` is `….pdf`);
 * 4. a final `.pdf`, in any case, is kept as it is; otherwise `.pdf` is appended;
 * 5. leading dots, underscores and spaces of the rest are removed (no hidden or `..` names, and
 *    `../../etc/passwd` is `etc_passwd.pdf`); a rest of nothing but punctuation and
 *    spaces is no name (`///`, `..`, `.pdf`, `-- --`), and the next candidate is tried;
 * 6. the rest is cut, on a character (grapheme) boundary, so the whole name fits in 255 bytes of
 *    UTF-8, the usual file-system limit.
 * docs/media.md repeats these with examples.
 */
export const FALLBACK_DOCUMENT_NAME = 'document.pdf';
export const MAX_FILENAME_BYTES = 255;

export function documentFilename(given: string | undefined | null, fromUrl: string | null): string {
  return clean(given) ?? clean(fromUrl) ?? FALLBACK_DOCUMENT_NAME;
}

// C0 controls, DEL and C1 controls; LRM, RLM, ALM; the embeddings, overrides and isolates.
const CONTROLS = /[\p{Cc}\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/gu;
const EXTENSION = /\.pdf$/i;

function clean(raw: string | undefined | null): string | null {
  if (typeof raw !== 'string') return null;
  const name = raw
    .normalize('NFC')
    .replace(CONTROLS, '')
    .replace(/[/\\]/g, '_')
    .replace(/\s+/gu, ' ')
    .trim()
    .replace(/[. ]+$/, '');
  const ext = EXTENSION.exec(name)?.[0] ?? '.pdf';
  const stem = name
    .replace(EXTENSION, '')
    .replace(/^[._ ]+/, '')
    .replace(/ +$/, '');
  if (!/[^\p{P}\p{Z}]/u.test(stem)) return null;
  return truncate(stem, MAX_FILENAME_BYTES - Buffer.byteLength(ext)) + ext;
}

const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** The longest prefix of whole graphemes of `s` within `maxBytes` bytes of UTF-8. */
function truncate(s: string, maxBytes: number): string {
  if (Buffer.byteLength(s) <= maxBytes) return s;
  let out = '';
  let bytes = 0;
  for (const { segment } of segmenter.segment(s)) {
    const n = Buffer.byteLength(segment);
    if (bytes + n > maxBytes) break;
    out += segment;
    bytes += n;
  }
  // A single grapheme longer than the limit (a pile of combining marks): cut between code points.
  if (!out) {
    for (const c of s) {
      bytes += Buffer.byteLength(c);
      if (bytes > maxBytes) break;
      out += c;
    }
  }
  return out.replace(/[. ]+$/, '');
}
