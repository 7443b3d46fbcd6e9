import { beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../src/events/types.ts';
import { errorStatuses } from '../src/lib/errors.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * The service's own pages: `/` (what it is, where each face lives, the event catalog) and the
 * error reference at `/errors` (docs/errors.md rendered, one anchor per code); and `doc_url` in
 * every error body, REST and GraphQL, pointing at its code's anchor there.
 */
let app: TestApp;
let key: string;

beforeAll(async () => {
  app = await startTestApp();
  ({ key } = await app.clinicWithKey('dental', ['patients:read']));
});

const page = async (path: string, init: RequestInit = {}) => {
  const res = await fetch(`${app.url}${path}`, init);
  return { res, html: await res.text() };
};

/** The ids the page's elements carry. */
const idsOf = (html: string) => new Set([...html.matchAll(/\bid="([^"]+)"/g)].map((m) => m[1]));

describe('/', () => {
  it('is an HTML page that links every face of the service and lists every event type', async () => {
    const { res, html } = await page('/');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    for (const href of ['/v1/docs', '/graphql', '/inbox', '/webhooks', '/health', '/errors', '#events'])
      expect(html, href).toContain(`href="${href}"`);
    const ids = idsOf(html);
    expect(ids.has('events')).toBe(true);
    for (const type of EVENT_TYPES) expect(ids.has(type), type).toBe(true);
    // Nothing is loaded from elsewhere, and no script runs.
    expect(html).not.toMatch(/<script|https?:\/\/(?!www\.w3\.org\/2000\/svg)/);
  });

  it("says the demo's clinics are test clinics and links the refusal a live clinic's key gets", async () => {
    const { html } = await page('/');
    expect(idsOf(html).has('test-mode')).toBe(true);
    expect(html).toMatch(/The demo's clinics\s+are test clinics: <code>cg_test_<\/code> keys, the sandbox/);
    expect(html).toContain('href="/errors#test_mode_only"');
    expect(html).toContain('<code>docs/test-mode.md</code>');
    // The link lands on the code's row of the reference.
    expect(idsOf((await page('/errors')).html).has('test_mode_only')).toBe(true);
  });

  it('answers HEAD without a body, and another method with the JSON 404 it always had', async () => {
    const head = await page('/', { method: 'HEAD' });
    expect(head.res.status).toBe(200);
    expect(head.html).toBe('');
    const post = await fetch(`${app.url}/`, { method: 'POST' });
    expect(post.status).toBe(404);
    expect((await post.json()).error).toMatchObject({ code: 'not_found', doc_url: '/errors#not_found' });
  });
});

describe('/errors', () => {
  it('renders docs/errors.md with a row for every error code, that code its id', async () => {
    const { res, html } = await page('/errors');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const ids = idsOf(html);
    for (const code of Object.keys(errorStatuses)) {
      expect(ids.has(code), `no row for ${code} in docs/errors.md`).toBe(true);
      expect(html).toMatch(new RegExp(`<tr id="${code}">\\s*<td>${errorStatuses[code as never]}</td>`));
    }
    // The text is the document's, its code spans and tables rendered.
    expect(html).toContain('<h1>Errors</h1>');
    expect(html).toContain('<code>Retry-After: 5</code>');
    // Links to documents the service does not serve are named, not left to answer 404.
    expect(html).not.toMatch(/href="[\w-]+\.md/);
    expect(html).toContain('docs/limits.md');
  });

  it('without docs/errors.md (an installation without docs/) still answers a row for every code', async () => {
    const bare = await startTestApp({
      errorReferenceSource: new URL('./no-such-errors.md', import.meta.url),
    });
    const res = await fetch(`${bare.url}/errors`);
    expect(res.status).toBe(200);
    const html = await res.text();
    for (const code of Object.keys(errorStatuses))
      expect(html).toMatch(new RegExp(`<tr id="${code}">\\s*<td>${errorStatuses[code as never]}</td>`));
    // The table alone: none of the document's text.
    expect(html).not.toContain('<code>Retry-After: 5</code>');
  });
});

describe('doc_url', () => {
  it('REST: every error body names its code in the served reference', async () => {
    const { html } = await page('/errors');
    const ids = idsOf(html);
    const cases = [
      await app.get('/v1/patients', null),
      await app.get('/v1/patients?limit=0', key),
      await app.get('/v1/patients/pat_999999', key),
      await app.get('/v1/payments', key),
      await app.get('/v1/nope', key),
    ];
    expect(cases.map((r) => r.body.error.code)).toEqual([
      'unauthenticated',
      'validation_failed',
      'not_found',
      'forbidden',
      'not_found',
    ]);
    for (const r of cases) {
      const { code, doc_url } = r.body.error;
      expect(doc_url).toBe(`/errors#${code}`);
      expect(ids.has(new URL(doc_url, app.url).hash.slice(1))).toBe(true);
    }
  });

  it('GraphQL: extensions.doc_url, beside code, for a field error and a request refusal', async () => {
    const field = await app.gql('{ payments(first: 1) { edges { node { id } } } }', {}, key);
    expect(field.body.errors[0].extensions).toMatchObject({
      code: 'forbidden',
      doc_url: '/errors#forbidden',
    });
    const refused = await app.gql('{ patients(first: 1) { edges { node { id } } } }', {}, null);
    expect(refused.status).toBe(401);
    expect(refused.body.errors[0].extensions).toMatchObject({
      code: 'unauthenticated',
      doc_url: '/errors#unauthenticated',
    });
    const invalid = await app.gql('{ nope }', {}, key);
    expect(invalid.body.errors[0].extensions).toMatchObject({
      code: 'invalid_request',
      doc_url: '/errors#invalid_request',
    });
  });
});
