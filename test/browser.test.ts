import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, launchChromium } from './chromium.ts';
import { fixtures } from './fixtures.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * The pages, in a real headless Chromium (Debian's `chromium`): GraphiQL at /graphql and Swagger
 * UI at /v1/docs render from the installed packages, with no request to another host. GraphiQL
 * shows the schema before any key is given, runs its default query with a key typed into its
 * headers editor, and still has the key after a reload. Its subscriptions run over graphql-ws with
 * that key in connection_init, and without a key say so at once.
 */
const available = chromiumAvailable;

let app: TestApp;
let key: string;
/** webhooks:manage, which the `events` subscription needs. */
let eventsKey: string;
let writer: string;
let browser: Browser;

beforeAll(async () => {
  if (!available) return;
  app = await startTestApp();
  let clinicId: number;
  ({ clinicId, key } = await app.clinicWithKey('dental', ['patients:read']));
  await fixtures(app.orm, clinicId).patient({ first: 'Rivka', last: 'Mizrahi', phone: '054-765-4321' });
  eventsKey = await app.key(clinicId, ['webhooks:manage']);
  writer = await app.key(clinicId, ['patients:write']);
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
});

/** A page that records every request it makes and every error it throws. */
async function watchedPage(): Promise<{ page: Page; offHost: string[]; errors: string[] }> {
  const page = await browser.newPage();
  const offHost: string[] = [];
  const errors: string[] = [];
  page.on('request', (r) => {
    const url = new URL(r.url());
    if (!['http:', 'https:', 'ws:', 'wss:'].includes(url.protocol)) return; // data:, blob:
    if (url.hostname !== '127.0.0.1' && url.hostname !== 'localhost') offHost.push(r.url());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  return { page, offHost, errors };
}

/** The console open and ready, `text` typed into its query editor. */
async function consoleWithQuery(page: Page, text: string): Promise<void> {
  await page.goto(`${app.url}/graphql`, { waitUntil: 'load' });
  await page.locator('.graphiql-execute-button').waitFor({ timeout: 15_000 });
  await page.locator('.graphiql-query-editor').click();
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(text);
}

/** Replaces the headers editor's content, as a user pasting a key does. */
async function pasteHeaders(page: Page, headers: Record<string, string>): Promise<void> {
  await page.getByRole('button', { name: 'Headers', exact: true }).click();
  await page.locator('.graphiql-editor-tool .graphiql-editor').last().click();
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(JSON.stringify(headers));
}

/** The frames the page sends over its websockets, parsed. */
function sentFrames(page: Page): { type: string; payload?: any }[] {
  const frames: { type: string; payload?: any }[] = [];
  page.on('websocket', (ws) => ws.on('framesent', (f) => frames.push(JSON.parse(String(f.payload)))));
  return frames;
}

const responseText = async (page: Page) =>
  (await page.locator('.graphiql-response').innerText()).replace(/\s+/g, ' ');

const SUBSCRIPTION = 'subscription { events { id type data } }';

describe.skipIf(!available)('pages in Chromium', () => {
  it('GraphiQL: Docs without a key, its assets cached for good, a pasted key kept across a reload', async () => {
    const { page, offHost, errors } = await watchedPage();
    const assets: { url: string; cacheControl: string | undefined }[] = [];
    page.on('response', (r) => {
      if (new URL(r.url()).pathname.startsWith('/graphql/assets/'))
        assets.push({ url: r.url(), cacheControl: r.headers()['cache-control'] });
    });
    await page.goto(`${app.url}/graphql`, { waitUntil: 'load' });
    await page.locator('.graphiql-execute-button').waitFor({ timeout: 15_000 });
    // The schema loaded on first open, with no key: the Docs pane lists Query's fields.
    await page.locator('.graphiql-sidebar button[aria-label="Show Documentation Explorer"]').click();
    const docs = page.locator('.graphiql-doc-explorer');
    await docs.getByText('Query', { exact: true }).click({ timeout: 15_000 });
    await docs.getByText('Patient', { exact: true }).first().waitFor({ timeout: 15_000 });
    expect(await docs.innerText()).not.toMatch(/Error fetching schema|Authorization/);
    // The script, the stylesheet and the Monaco workers: files cached for a year (the GraphQL
    // worker may be fetched after the Docs pane shows).
    await expect
      .poll(() => assets.map((a) => new URL(a.url).pathname.replace(/\.[0-9a-f]{16}\./, '.*.')).sort(), {
        timeout: 10_000,
      })
      .toEqual(
        expect.arrayContaining([
          '/graphql/assets/graphiql.*.css',
          '/graphql/assets/graphiql.*.js',
          '/graphql/assets/graphql.worker.*.js',
          '/graphql/assets/graphql-ws.*.js',
          '/graphql/assets/graphiql-fetcher.*.js',
        ]),
      );
    for (const a of assets) expect(a.cacheControl, a.url).toBe('public, max-age=31536000, immutable');
    // The headers editor holds a commented example (no placeholder is sent); a key replaces it.
    await page.getByRole('button', { name: 'Headers', exact: true }).click();
    const headers = page.locator('.graphiql-editor-tool .graphiql-editor').last();
    await expect
      .poll(async () => (await headers.innerText()).replace(/\s+/g, ' '), { timeout: 10_000 })
      .toMatch(/\/\/ "Authorization": "Bearer/);
    await headers.click();
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.press('Delete');
    await page.keyboard.insertText(JSON.stringify({ Authorization: `Bearer ${key}` }));
    await page.locator('.graphiql-execute-button').click();
    const result = page.locator('.graphiql-response');
    await expect
      .poll(async () => (await result.innerText()).replace(/\s+/g, ' '), { timeout: 15_000 })
      .toMatch(/pat_\d+.*Rivka/);
    // A reload keeps the key (GraphiQL's storage, written a moment after an edit), and runs with it.
    await expect
      .poll(() => page.evaluate(() => JSON.stringify({ ...localStorage })), { timeout: 10_000 })
      .toContain(key);
    await page.reload({ waitUntil: 'load' });
    await page.locator('.graphiql-execute-button').waitFor({ timeout: 15_000 });
    await page.getByRole('button', { name: 'Headers', exact: true }).click();
    await expect
      .poll(async () => (await headers.innerText()).replace(/\s+/g, ' '), { timeout: 10_000 })
      .toContain(`Bearer ${key}`);
    // The tab it had, not a new empty one.
    expect(await page.locator('.graphiql-tab').count()).toBeLessThanOrEqual(1);
    await page.locator('.graphiql-execute-button').click();
    await expect
      .poll(async () => (await result.innerText()).replace(/\s+/g, ' '), { timeout: 15_000 })
      .toMatch(/pat_\d+.*Rivka/);
    expect(offHost).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  }, 90_000);

  it('GraphiQL: a subscription runs over graphql-ws with the pasted key, and shows a REST write as it happens', async () => {
    const { page, offHost, errors } = await watchedPage();
    const frames = sentFrames(page);
    await consoleWithQuery(page, SUBSCRIPTION);
    await pasteHeaders(page, { Authorization: `Bearer ${eventsKey}` });
    await page.locator('.graphiql-execute-button').click();
    // Subscribed (the hub has its listener) before the write, so its event is a live one.
    await expect.poll(() => app.server.app.eventHub.size, { timeout: 15_000 }).toBe(1);
    // The browser reports its sent frames on its own time: the server may have subscribed first.
    await expect.poll(() => frames.length, { timeout: 5_000 }).toBeGreaterThanOrEqual(2);
    expect(frames[0]).toEqual({ type: 'connection_init', payload: { Authorization: `Bearer ${eventsKey}` } });
    expect(frames[1]).toMatchObject({ type: 'subscribe', payload: { query: SUBSCRIPTION } });
    const created = await app.post('/v1/patients', { first_name: 'Noa', last_name: 'Live' }, writer);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.data.id;
    await expect
      .poll(() => responseText(page), { timeout: 15_000 })
      .toMatch(new RegExp(`"events": \\{ "id": "evt_\\d+".*"data": \\{ "id": "${id}".*"first_name": "Noa"`));
    await page.locator('.graphiql-response').screenshot({ path: '/tmp/console-subscription-event.png' });
    // The run button stops it: the subscription ends on the server too.
    await page.locator('.graphiql-execute-button').click();
    await expect.poll(() => app.server.app.eventHub.size, { timeout: 10_000 }).toBe(0);
    expect(offHost).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  }, 90_000);

  it('GraphiQL: a subscription without a key, or with a refused one, says so at once', async () => {
    const { page, errors } = await watchedPage();
    const frames = sentFrames(page);
    // The headers editor as it starts: its example commented out, so no key.
    await consoleWithQuery(page, SUBSCRIPTION);
    await page.locator('.graphiql-execute-button').click();
    await expect
      .poll(() => responseText(page), { timeout: 5_000 })
      .toContain('Subscriptions need your API key. Put it in Headers');
    await page.locator('.graphiql-response').screenshot({ path: '/tmp/console-subscription-no-key.png' });
    expect(frames).toEqual([]);
    // A key the server refuses (4403): shown on the first refusal, not after graphql-ws's retries
    // (about half a minute).
    await pasteHeaders(page, { Authorization: 'Bearer cg_test_not_a_key' });
    await page.locator('.graphiql-execute-button').click();
    await expect
      .poll(() => responseText(page), { timeout: 5_000 })
      .toContain(
        'The server refused the API key in Headers: Invalid or revoked API key. (close 4403, unauthenticated)',
      );
    await page.locator('.graphiql-response').screenshot({ path: '/tmp/console-subscription-refused.png' });
    expect(frames.filter((f) => f.type === 'connection_init')).toHaveLength(1);
    // Finished, not left running: the button runs again.
    await page.locator('.graphiql-execute-button').click();
    await expect.poll(() => frames.filter((f) => f.type === 'connection_init').length).toBe(2);
    expect(errors).toEqual([]);
    await page.close();
  }, 90_000);

  it('Swagger UI at /v1/docs renders the operations offline', async () => {
    const { page, offHost, errors } = await watchedPage();
    await page.goto(`${app.url}/v1/docs`, { waitUntil: 'load' });
    await page
      .locator('.opblock-summary-path', { hasText: '/v1/patients' })
      .first()
      .waitFor({ timeout: 15_000 });
    expect(await page.locator('.opblock').count()).toBeGreaterThan(5);
    expect(offHost).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);
});
