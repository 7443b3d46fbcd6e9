import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, launchChromium } from './chromium.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * The REST docs as a newcomer meets them (issue 29, the first hour): the page shows its first
 * operation quickly, and "Try it out" on GET /v1/patients sends nothing the newcomer did not
 * choose: no `include` preselected, which a dental clinic's key answers with a 422.
 */
let app: TestApp;
let browser: Browser;

beforeAll(async () => {
  if (!chromiumAvailable) return;
  app = await startTestApp();
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
});

describe.skipIf(!chromiumAvailable)('REST docs page', () => {
  // The figure is 5 s on an idle machine: 2.5 s on the machine of the session that built
  // this page, 6.4-8.3 s on a later one for the same commit (Swagger UI 5 spends about 4 s in
  // apidom's OpenAPI 3.1 dereferencing and 1.8 s compiling its bundle: docs/performance.md, REST
  // docs page). The figure is printed for the record; CI holds it to a bound no machine of this
  // workplace should pass, so a page that stops rendering, or renders far slower, is caught.
  it('shows its first operation in a bounded time (the figure printed)', async () => {
    const page = await browser.newPage();
    // One visit warms the service's caches (the OpenAPI document is built at start; the assets are files).
    const started = Date.now();
    await page.goto(`${app.url}/v1/docs`);
    await page.locator('.opblock').first().waitFor({ timeout: 15_000 });
    const ms = Date.now() - started;
    console.log(`REST docs page: first operation after ${ms} ms`);
    expect(ms, `first operation after ${ms} ms`).toBeLessThan(12_000);
    await page.close();
  }, 30_000);

  it('Try it out on GET /v1/patients preselects no include', async () => {
    const page = await browser.newPage();
    await page.goto(`${app.url}/v1/docs`);
    const op = page.locator('#operations-Patients-listPatients');
    await op.locator('.opblock-summary').click();
    await op.locator('button.try-out__btn').click();
    const include = op.locator('tr[data-param-name="include"] select');
    await include.waitFor({ timeout: 10_000 });
    const selected = await include.evaluate((s) =>
      Array.from((s as HTMLSelectElement).selectedOptions).map((o) => o.value),
    );
    expect(selected.filter((v) => v !== '' && v !== '--')).toEqual([]);
    await page.close();
  }, 30_000);
});
