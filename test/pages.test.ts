import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../src/events/types.ts';
import { loadConfig } from '../src/lib/config.ts';
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

/** The documents of docs/, by name (`events` for docs/events.md). */
const documents = readdirSync(new URL('../docs/', import.meta.url))
  .filter((f) => f.endsWith('.md'))
  .map((f) => f.slice(0, -3));

/** A GET of `path` exactly as written (no URL parser resolving its dots on the way). */
const rawGet = (port: number, path: string) =>
  new Promise<{ status: number; body: string }>((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path }, (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });

/** HTML text back to what it says. */
const textOf = (html: string) =>
  html.replace(
    /&(amp|lt|gt|quot|#39);/g,
    (_, e) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[e as 'amp'],
  );

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
    // Nothing is loaded from elsewhere, and no script runs (the calls it shows are text).
    expect(html).not.toMatch(/<script|(?:src|href)="https?:\/\//);
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

  it('shows how to subscribe a webhook and send it a test event: two calls that run as shown', async () => {
    const { html } = await page('/');
    expect(idsOf(html).has('webhooks')).toBe(true);
    const calls = textOf(
      /<h2 id="webhooks">[\s\S]*?<pre><code>([\s\S]*?)<\/code><\/pre>/.exec(html)?.[1] ?? '',
    );
    // At the address the page was asked at, with the key as a variable.
    expect(calls).toContain(
      `curl -s -H "Authorization: Bearer $KEY" -H "content-type: application/json" ${app.url}/v1/webhooks \\`,
    );
    const subscribe = /(\S+\/v1\/webhooks) \\\n\s+-d '([^']+)'/.exec(calls);
    const test = /(\S+\/v1\/webhooks\/)wh_1(\/test) -d '([^']+)'/.exec(calls);
    expect(subscribe && test, calls).toBeTruthy();
    const { key: manager } = await app.clinicWithKey('dental', ['webhooks:manage'], 'Webhook clinic', {
      mode: 'test',
    });
    const post = (url: string, body: string) => app.send('POST', url.slice(app.url.length), body, manager);
    const sub = await post(subscribe![1], subscribe![2]);
    expect(sub.status, JSON.stringify(sub.body)).toBe(201);
    const sample = await post(`${test![1]}${sub.body.data.id}${test![2]}`, test![3]);
    expect(sample.status, JSON.stringify(sample.body)).toBe(202);
    expect(sample.body.data.test).toBe(true);
  });

  it("names https in its calls when a trusted proxy says the client's connection was, and only then", async () => {
    const proto = { 'x-forwarded-proto': 'https' };
    const host = new URL(app.url).host;
    // The test app trusts no proxy: a client cannot make the page name another scheme.
    expect(await (await fetch(`${app.url}/`, { headers: proto })).text()).toContain(
      `http://${host}/v1/webhooks`,
    );
    const behind = await startTestApp({ trustProxy: 'loopback' });
    const behindHost = new URL(behind.url).host;
    const html = await (await fetch(`${behind.url}/`, { headers: proto })).text();
    expect(html).toContain(`https://${behindHost}/v1/webhooks`);
    expect(html).not.toContain(`http://${behindHost}/v1/`);
    const plain = await (await fetch(`${behind.url}/`)).text();
    expect(plain).toContain(`http://${behindHost}/v1/webhooks`);
  });

  it('links every document of docs/', async () => {
    const { html } = await page('/');
    for (const name of documents)
      expect(html, name).toContain(`href="${name === 'errors' ? '/errors' : `/docs/${name}`}"`);
    expect(html).toContain('href="/docs"');
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
    expect(html).toContain('<h1 id="errors">Errors</h1>');
    expect(html).toContain('<code>Retry-After: 5</code>');
    // Its links to the other documents go to their pages.
    expect(html).not.toMatch(/href="[\w-]+\.md/);
    expect(html).toMatch(/href="\/docs\/limits(#[\w-]+)?"/);
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

describe('/docs', () => {
  it('renders each document of docs/ as /errors renders its own, and lists them at /docs', async () => {
    const index = await page('/docs');
    expect(index.res.status).toBe(200);
    const pages = new Map<string, string>();
    for (const name of documents) {
      if (name === 'errors') continue;
      expect(index.html, name).toContain(`href="/docs/${name}"`);
      const { res, html } = await page(`/docs/${name}`);
      expect(res.status, name).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
      const source = readFileSync(new URL(`../docs/${name}.md`, import.meta.url), 'utf8');
      const title = /^#\s+(.+)$/m.exec(source)![1];
      expect(html, name).toContain(`<title>${title.replace(/&/g, '&amp;')} · clinic-gateway</title>`);
      // Raw HTML of the source is text, as in /errors.
      expect(html).not.toMatch(/<script/);
      pages.set(name, html);
    }
    // Every link from one document to another lands: on its page, and on a heading id there.
    let links = 0;
    for (const [name, html] of pages) {
      expect(html, name).not.toMatch(/href="[\w-]+\.md/);
      for (const [, target, anchor] of html.matchAll(/href="\/docs\/([\w-]+)(?:#([^"]+))?"/g)) {
        links++;
        expect(pages.has(target), `${name} → ${target}`).toBe(true);
        if (anchor) expect(idsOf(pages.get(target)!).has(anchor), `${name} → ${target}#${anchor}`).toBe(true);
      }
      for (const [, anchor] of html.matchAll(/href="#([^"]+)"/g))
        expect(idsOf(html).has(anchor), `${name} → #${anchor}`).toBe(true);
    }
    expect(links).toBeGreaterThan(10);
    // HEAD: the same, without a body; /docs/errors is /errors.
    const head = await page('/docs/events', { method: 'HEAD' });
    expect([head.res.status, head.html]).toEqual([200, '']);
    const moved = await fetch(`${app.url}/docs/errors`, { redirect: 'manual' });
    expect([moved.status, moved.headers.get('location')]).toEqual([301, '/errors']);
  });

  it('serves nothing else: a path out of docs/, an encoded slash, another file or an unknown name is the JSON 404', async () => {
    const { port } = new URL(app.url);
    for (const path of [
      '/docs/../package.json',
      '/docs/..%2Fpackage.json',
      '/docs/%2e%2e%2fREADME',
      '/docs/.%2e/README',
      '/docs/..',
      '/docs//etc/passwd',
      '/docs/events.md',
      '/docs/events/',
      '/docs/Events',
      '/docs/events%00',
      '/docs/no-such-document',
    ]) {
      // As sent: fetch would resolve the dots before they left.
      const res = await rawGet(Number(port), path);
      expect(res.status, path).toBe(404);
      expect(JSON.parse(res.body).error, path).toMatchObject({
        code: 'not_found',
        doc_url: '/errors#not_found',
      });
    }
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

  it('is absolute when the deployment says where clients reach it (PUBLIC_URL), in REST and GraphQL', async () => {
    const other = await startTestApp({ publicUrl: 'https://clinic.example.com/gateway/' });
    const rest = await other.get('/v1/patients', null);
    expect(rest.body.error.doc_url).toBe('https://clinic.example.com/gateway/errors#unauthenticated');
    const gql = await other.gql('{ patients(first: 1) { edges { node { id } } } }', {}, null);
    expect(gql.body.errors[0].extensions.doc_url).toBe(
      'https://clinic.example.com/gateway/errors#unauthenticated',
    );
    // The landing page's calls name that address too.
    expect(await (await fetch(`${other.url}/`)).text()).toContain(
      'https://clinic.example.com/gateway/v1/webhooks',
    );
    // The deadline's 504, answered by a timer armed at arrival (a body that never ends), too.
    const slow = await startTestApp({
      publicUrl: 'https://clinic.example.com/gateway',
      limits: { requestDeadlineMs: 300 },
    });
    const { key: writer } = await slow.clinicWithKey('dental', ['patients:write']);
    const timedOut = await new Promise<any>((resolve, reject) => {
      const req = http.request(`${slow.url}/v1/patients`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-length': '100',
          authorization: `Bearer ${writer}`,
        },
      });
      req.on('response', async (r) => {
        let text = '';
        for await (const chunk of r) text += chunk;
        resolve({ status: r.statusCode, body: JSON.parse(text) });
        req.destroy();
      });
      req.on('error', reject);
      req.write('{"first_name":');
    });
    expect(timedOut.status).toBe(504);
    expect(timedOut.body.error.doc_url).toBe('https://clinic.example.com/gateway/errors#deadline_exceeded');
  });

  it('refuses a PUBLIC_URL that is not an absolute http(s) URL at start-up (doc_url would mislead)', () => {
    expect(() => loadConfig({ PUBLIC_URL: 'api.example.com' })).toThrow(/PUBLIC_URL/);
    expect(() => loadConfig({ PUBLIC_URL: 'ftp://api.example.com' })).toThrow(/PUBLIC_URL/);
    expect(loadConfig({ PUBLIC_URL: 'https://api.example.com/gw' }).PUBLIC_URL).toBe(
      'https://api.example.com/gw',
    );
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
