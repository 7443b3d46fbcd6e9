import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { restRoutes } from '../src/rest/routes.ts';
import { chromiumAvailable, launchChromium } from './chromium.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * No page of the service can be framed by another site (issue 34): the GraphQL console keeps the
 * key a visitor pasted and prefills its editor from `?query=`, so a framed console under a decoy
 * button ran a mutation with that key in one click. Every HTML page sends
 * `Content-Security-Policy: … frame-ancestors 'none'` and `X-Frame-Options: DENY`; a sweep of every
 * path the service knows finds no other HTML; and a real Chromium on another loopback origin
 * (127.0.0.2) that frames each page gets nothing of it.
 */
let app: TestApp;
let key: string;

beforeAll(async () => {
  app = await startTestApp();
  ({ key } = await app.clinicWithKey('dental', ['patients:read', 'webhooks:manage']));
});

const MUTATION =
  'mutation { createWebhook(input: { url: "http://127.0.0.1:9/x", eventTypes: ["patient.created"] }) { __typename } }';

/** Every HTML page the service serves: path, and what it is. */
const PAGES: [path: string, page: string][] = [
  ['/', 'landing page'],
  ['/errors', 'error reference'],
  ['/docs', 'the documents of docs/'],
  ['/docs/events', 'a document of docs/ (every /docs/<name> is this page)'],
  ['/graphql', 'GraphQL console (GraphiQL)'],
  ['/graphql/', 'GraphQL console, trailing slash'],
  [`/graphql?query=${encodeURIComponent(MUTATION)}`, 'GraphQL console prefilled from ?query='],
  ['/inbox', 'live inbox'],
  ['/inbox/', 'live inbox, trailing slash'],
  ['/webhooks', 'webhook portal'],
  ['/webhooks/', 'webhook portal, trailing slash'],
  ['/v1/docs', 'REST docs (Swagger UI)'],
  ['/v1/docs/', 'REST docs, trailing slash'],
];

const html = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' };

/** The directives of a Content-Security-Policy header, by name. */
function directives(csp: string | null): Map<string, string> {
  const map = new Map<string, string>();
  for (const part of (csp ?? '').split(';')) {
    const [name, ...values] = part.trim().split(/\s+/);
    if (name) map.set(name.toLowerCase(), values.join(' '));
  }
  return map;
}

function expectUnframeable(res: Response, label: string) {
  expect(directives(res.headers.get('content-security-policy')).get('frame-ancestors'), label).toBe("'none'");
  expect(res.headers.get('x-frame-options'), label).toBe('DENY');
}

describe('HTML pages', () => {
  it.each(PAGES)(
    '%s sends frame-ancestors none and X-Frame-Options DENY, on GET and HEAD (%s)',
    async (path, page) => {
      for (const method of ['GET', 'HEAD']) {
        // With the key a visitor's browser would hold too: the answer is the same page.
        for (const headers of [html, { ...html, authorization: `Bearer ${key}` }]) {
          const res = await fetch(`${app.url}${path}`, { method, headers });
          expect(res.status, `${method} ${page}`).toBe(200);
          expect(res.headers.get('content-type'), page).toMatch(/^text\/html/);
          expectUnframeable(res, `${method} ${page}`);
        }
      }
    },
  );

  it('keeps each page its own policy beside frame-ancestors', async () => {
    const landing = await fetch(`${app.url}/`, { headers: html });
    expect(directives(landing.headers.get('content-security-policy')).get('default-src')).toBe("'none'");
    const inbox = await fetch(`${app.url}/inbox`, { headers: html });
    expect(directives(inbox.headers.get('content-security-policy')).get('script-src')).toBe("'self'");
    const portal = await fetch(`${app.url}/webhooks`, { headers: html });
    expect(directives(portal.headers.get('content-security-policy')).get('script-src')).toBe("'self'");
  });

  it('no other path answers HTML: the sweep over every route, page asset and unknown path finds only the table', async () => {
    const paths = new Set<string>([
      '/health',
      '/ready',
      '/metrics',
      '/v1/openapi.json',
      '/nowhere',
      '/graphql/nope',
    ]);
    paths.add('/v1/docs/swagger-ui.css').add('/v1/docs/swagger-ui-bundle.js').add('/v1/docs/nope');
    for (const r of restRoutes) paths.add(`/v1${r.path.replace(/:[a-z_]+/gi, 'x_1')}`);
    // The pages' own files (hashed names), as a browser finds them.
    for (const [page] of PAGES) {
      const text = await (await fetch(`${app.url}${page}`, { headers: html })).text();
      for (const m of text.matchAll(/(?:src|href)="(\/[^"#]*)/g)) paths.add(m[1]);
    }
    expect(paths.size).toBeGreaterThan(40);
    const tabled = new Set(PAGES.map(([p]) => p.split('?')[0]));
    // /docs/<name> is one page for every document of docs/: the table's /docs/events stands for it.
    const isDocument = (p: string) => /^\/docs\/[a-z0-9-]+$/.test(p);
    const found: string[] = [];
    for (const path of paths)
      for (const headers of [html, { ...html, authorization: `Bearer ${key}` }]) {
        const res = await fetch(`${app.url}${path}`, { headers });
        await res.arrayBuffer();
        if (!/html/i.test(res.headers.get('content-type') ?? '')) continue;
        found.push(path);
        expectUnframeable(res, path);
      }
    expect(found.filter((p) => !tabled.has(p.split('?')[0]) && !isDocument(p))).toEqual([]);
  });
});

describe.skipIf(!chromiumAvailable)('framed by another origin in Chromium', () => {
  let browser: Browser;
  let decoy: Server;
  let decoyUrl: string;
  /** The decoy's page: one iframe of the service's page named by `?frame=`. */
  beforeAll(async () => {
    browser = await launchChromium();
    decoy = createServer((req, res) => {
      const target = new URL(req.url ?? '/', 'http://decoy').searchParams.get('frame') ?? '/';
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(`<!doctype html><title>decoy</title><button>Win a prize</button>
<iframe id="victim" style="opacity:.01;position:absolute;top:0;left:0;width:800px;height:600px" src="${app.url}${target.replace(/"/g, '&quot;')}"></iframe>`);
    });
    // Another loopback address: another origin, as a stranger's site is.
    await new Promise<void>((resolve) => decoy.listen(0, '127.0.0.2', resolve));
    decoyUrl = `http://127.0.0.2:${(decoy.address() as AddressInfo).port}/`;
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => decoy?.close(resolve));
  });

  /** What the iframe holds once the decoy has loaded: its URL and whether it has a document of the service. */
  async function framed(target: string) {
    const page = await browser.newPage();
    const refusals: string[] = [];
    page.on('console', (m) => {
      if (/frame-ancestors|X-Frame-Options/i.test(m.text())) refusals.push(m.text());
    });
    await page.goto(`${decoyUrl}?frame=${encodeURIComponent(target)}`, { waitUntil: 'load' });
    const frame = page.frames().find((f) => f !== page.mainFrame());
    const url = frame?.url() ?? '';
    const content = (await frame?.content().catch(() => '')) ?? '';
    await page.close();
    return { url, loaded: url.startsWith(app.url), content, refusals };
  }

  it('a frame of the decoy loads a page that allows framing (the check can see a load)', async () => {
    const r = await framed('/v1/openapi.json');
    expect(r.loaded).toBe(true);
    expect(r.content).toContain('openapi');
  }, 60_000);

  it.each(PAGES)(
    '%s does not load in the frame (%s)',
    async (path) => {
      const r = await framed(path);
      expect(r.loaded, r.url).toBe(false);
      expect(r.content).not.toMatch(/GraphiQL|swagger|clinic-gateway/i);
      expect(r.refusals.length).toBeGreaterThan(0);
    },
    60_000,
  );
});
