import { describe, expect, it } from 'vitest';
import { documentFilename, MAX_FILENAME_BYTES } from '../src/media/filename.ts';

describe('documentFilename', () => {
  it.each([
    // [given, from the URL, expected]
    ['Invoice 2026-11.pdf', 'x.pdf', 'Invoice 2026-11.pdf'],
    ['Invoice', 'x.pdf', 'Invoice.pdf'],
    ['scan.PDF', null, 'scan.PDF'],
    ['scan.Pdf', null, 'scan.Pdf'],
    ['report.docx', null, 'report.docx.pdf'],
    ['report.pdf.', null, 'report.pdf'],
    ['report. ', null, 'report.pdf'],
    [undefined, 'Report Q3—final.pdf', 'Report Q3—final.pdf'],
    [null, 'download', 'download.pdf'],
    ['', 'from-url.pdf', 'from-url.pdf'],
    ['   ', 'from-url.pdf', 'from-url.pdf'],
    [undefined, null, 'document.pdf'],
    ['', '', 'document.pdf'],
    ['../../etc/passwd', null, 'etc_passwd.pdf'],
    ['..\\..\\boot.ini', null, 'boot.ini.pdf'],
    ['reports/2026/q3.pdf', null, 'reports_2026_q3.pdf'],
    ['C:\\Users\\me\\scan.pdf', null, 'C:_Users_me_scan.pdf'],
    ['line\nbreak\t.pdf', null, 'linebreak.pdf'],
    ['bell\u0007\u007f\u0085.pdf', null, 'bell.pdf'],
    ['invoice\u202Efdp.exe', null, 'invoicefdp.exe.pdf'],
    ['a   b  \u00a0 c.pdf', null, 'a b c.pdf'],
    ['.hidden.pdf', null, 'hidden.pdf'],
    ['.pdf', 'url.pdf', 'url.pdf'],
    ['..', 'url.pdf', 'url.pdf'],
    ['///', null, 'document.pdf'],
    ['-- --', 'url.pdf', 'url.pdf'],
    ['«…».pdf', null, 'document.pdf'],
    ['🦷.pdf', null, '🦷.pdf'],
    ['...', '...', 'document.pdf'],
    ['\u0000\u0001', null, 'document.pdf'],
    ['Cafe\u0301.pdf', null, 'Café.pdf'],
    ['סיכום ביקור', null, 'סיכום ביקור.pdf'],
  ])('(%j, %j) → %j', (given, fromUrl, expected) => {
    expect(documentFilename(given, fromUrl)).toBe(expected);
  });

  it('caps the name at 255 bytes of UTF-8, keeping the extension', () => {
    const long = `${'a'.repeat(300)}.pdf`;
    const name = documentFilename(long, null);
    expect(name).toBe(`${'a'.repeat(251)}.pdf`);
    expect(Buffer.byteLength(name)).toBe(MAX_FILENAME_BYTES);
    expect(documentFilename('a'.repeat(251), null)).toBe(`${'a'.repeat(251)}.pdf`);
  });

  it('cuts multi-byte text on a character boundary', () => {
    const name = documentFilename('ש'.repeat(200), null); // 2 bytes each
    expect(name).toBe(`${'ש'.repeat(125)}.pdf`);
    expect(Buffer.byteLength(name)).toBeLessThanOrEqual(MAX_FILENAME_BYTES);
  });

  it('never splits a grapheme (an emoji sequence stays whole or goes)', () => {
    const family = '👨‍👩‍👧'; // 18 bytes
    const name = documentFilename(`${'a'.repeat(240)}${family}`, null);
    expect(name).toBe(`${'a'.repeat(240)}.pdf`);
  });

  it('cuts between code points when one grapheme alone is over the limit', () => {
    const name = documentFilename(`x${'\u0301'.repeat(200)}`, null);
    expect(Buffer.byteLength(name)).toBeLessThanOrEqual(MAX_FILENAME_BYTES);
    expect(name.startsWith('x')).toBe(true);
    expect(name.endsWith('.pdf')).toBe(true);
  });
});
