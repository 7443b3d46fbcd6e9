import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../src/events/types.ts';
import { errorStatuses } from '../src/lib/errors.ts';
import { chromiumAvailable, launchChromium } from './chromium.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * The landing page and the error reference in a real headless Chromium (Debian's `chromium`):
 * they render with nothing from another host and no error (a CSP violation is a console error),
 * every link of `/` answers, and an error body's `doc_url`, resolved against the URL called,
 * opens the reference at its code's row, marked. Screenshots go to /tmp/pages-*.png.
 */
const available = chromiumAvailable;

let app: TestApp;
let key: string;
let browser: Browser;

beforeAll(async () => {
  if (!available) return;
  app = await startTestApp();
  ({ key } = await app.clinicWithKey('dental', ['patients:read']));
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
});

/** A page that records requests to other hosts, script errors and console errors. */
async function watchedPage(viewport = { width: 1200, height: 900 }) {
  const page = await browser.newPage({ viewport });
  const offHost: string[] = [];
  const errors: string[] = [];
  page.on('request', (r) => {
    const url = new URL(r.url());
    if (!['http:', 'https:', 'ws:', 'wss:'].includes(url.protocol)) return; // data:
    if (url.hostname !== '127.0.0.1' && url.hostname !== 'localhost') offHost.push(r.url());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  return { page, offHost, errors };
}

/** The id of the element the address's fragment targets (the row CSS marks), if any. */
const targeted = (page: Page) => page.evaluate(() => document.querySelector(':target')?.id ?? null);

describe.skipIf(!available)('pages in Chromium', () => {
  it('/: renders offline, every link answers, the event catalog lists every type', async () => {
    const { page, offHost, errors } = await watchedPage();
    const res = await page.goto(`${app.url}/`, { waitUntil: 'load' });
    expect(res?.status()).toBe(200);
    expect(await page.locator('h1').innerText()).toBe('clinic-gateway');
    const hrefs = await page
      .locator('main a, header a, footer a')
      .evaluateAll((as) => as.map((a) => (a as HTMLAnchorElement).href));
    for (const path of ['/v1/docs', '/graphql', '/inbox', '/webhooks', '/health', '/errors', '/#events'])
      expect(hrefs, path).toContain(new URL(path, app.url).href);
    for (const href of new Set(hrefs.map((h) => h.split('#')[0]))) {
      const r = await fetch(href, { headers: { accept: 'text/html' } });
      expect(r.status, href).toBe(200);
    }
    expect(await page.locator('#events + p + table tbody tr').count()).toBe(EVENT_TYPES.length);
    expect(await page.locator('tr#chat\\.message\\.received').innerText()).toContain('chat:read');
    await page.screenshot({ path: '/tmp/pages-landing.png', fullPage: true });
    // The link to the reference works as a visitor follows it.
    await page.locator('.links a', { hasText: 'Error reference' }).click();
    await page.waitForURL(`${app.url}/errors`);
    expect(await page.locator('h1').innerText()).toBe('Errors');
    expect(offHost).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('/ on a phone-sized screen: no sideways scrolling of the page', async () => {
    const { page, errors } = await watchedPage({ width: 390, height: 844 });
    await page.goto(`${app.url}/`, { waitUntil: 'load' });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await page.screenshot({ path: '/tmp/pages-landing-phone.png' });
    await page.goto(`${app.url}/#events`, { waitUntil: 'load' });
    await page.screenshot({ path: '/tmp/pages-landing-phone-events.png' });
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('a document of docs/: renders offline, its link to another lands on that section', async () => {
    const { page, offHost, errors } = await watchedPage();
    await page.goto(`${app.url}/`, { waitUntil: 'load' });
    await page.locator('#docs ~ ul a', { hasText: 'Test mode' }).click();
    await page.waitForURL(`${app.url}/docs/test-mode`);
    expect(await page.locator('main h1').innerText()).toMatch(/^Test mode/);
    await page.screenshot({ path: '/tmp/pages-doc.png' });
    // docs/test-mode.md links events.md#sample-events: the page of events.md, at that heading.
    await page.locator('main a[href="/docs/events#sample-events"]').first().click();
    await page.waitForURL(`${app.url}/docs/events#sample-events`);
    expect(await targeted(page)).toBe('sample-events');
    const heading = await page.locator('#sample-events').boundingBox();
    expect(heading?.y).toBeGreaterThanOrEqual(0);
    expect(heading?.y).toBeLessThan(900);
    await page.screenshot({ path: '/tmp/pages-doc-target.png' });
    expect(offHost).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('the documents on a phone-sized screen: no sideways scrolling of the page', async () => {
    const { page, errors } = await watchedPage({ width: 390, height: 844 });
    for (const name of ['events', 'decisions', 'limits', 'performance']) {
      await page.goto(`${app.url}/docs/${name}`, { waitUntil: 'load' });
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow, name).toBeLessThanOrEqual(0);
    }
    await page.screenshot({ path: '/tmp/pages-doc-phone.png' });
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it("an error's doc_url opens the reference at its code's row, marked", async () => {
    const { page, offHost, errors } = await watchedPage({ width: 1200, height: 700 });
    const called = `${app.url}/v1/patients?limit=0`;
    const r = await fetch(called, { headers: { authorization: `Bearer ${key}` } });
    const { error } = await r.json();
    expect(error.code).toBe('validation_failed');
    await page.goto(new URL(error.doc_url, called).href, { waitUntil: 'load' });
    expect(await targeted(page)).toBe('validation_failed');
    const row = page.locator('tr#validation_failed');
    // Scrolled to: the row is on screen.
    const box = await row.boundingBox();
    expect(box?.y).toBeGreaterThanOrEqual(0);
    expect((box?.y ?? 0) + (box?.height ?? 0) / 2).toBeLessThan(700);
    expect(await row.innerText()).toContain('422');
    // The targeted row is marked (CSS :target), its neighbours are not.
    const background = (sel: string) =>
      page
        .locator(sel)
        .first()
        .evaluate((el) => getComputedStyle(el).backgroundColor);
    expect(await background('tr#validation_failed td')).not.toBe(await background('tr#not_found td'));
    await page.screenshot({ path: '/tmp/pages-errors-target.png' });
    // Every code has its row, the status the service answers it with in the first cell.
    for (const [code, status] of Object.entries(errorStatuses))
      expect((await page.locator(`tr#${code} td`).first().innerText()).trim(), code).toBe(String(status));
    await page.screenshot({ path: '/tmp/pages-errors.png', fullPage: true });
    expect(offHost).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);
});
