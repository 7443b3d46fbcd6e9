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
  it('shows its first operation within 5 s', async () => {
    const page = await browser.newPage();
    // One visit warms the service's caches (the OpenAPI document is built at start; the assets are files).
    const started = Date.now();
    await page.goto(`${app.url}/v1/docs`);
    await page.locator('.opblock').first().waitFor({ timeout: 15_000 });
    const ms = Date.now() - started;
    expect(ms, `first operation after ${ms} ms`).toBeLessThan(5000);
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
