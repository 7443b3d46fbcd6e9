import { mkdirSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../src/events/types.ts';
import { chromiumAvailable, launchChromium } from './chromium.ts';
import { startTestApp, type TestApp } from './helpers.ts';
import { type Receiver, startReceiver } from './webhook-receiver.ts';

/**
 * The webhook portal at /webhooks in a real headless Chromium, against a real app and a real
 * loopback receiver (test/webhook-receiver.ts verifies every signature): a key pasted once; an
 * endpoint added with types ticked from the catalog, its secret shown once and copied; a test
 * event whose attempt shows in the log without a reload; a failure with its status and response,
 * the list's failure streak, a retry and a recover; an edit that disables it; a rotation whose
 * new secret the receiver verifies; the catalog with each type's sample; a delete; a refused
 * key. One page goes through the steps in order. The page asks no other host for anything and
 * throws nothing; screenshots go to /tmp/portal-shots/.
 */
const available = chromiumAvailable;
const SHOTS = '/tmp/portal-shots';

let app: TestApp;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let receiver: Receiver;
let key: string;
let endpointId: string;
const offHost: string[] = [];
const errors: string[] = [];

beforeAll(async () => {
  if (!available) return;
  mkdirSync(SHOTS, { recursive: true });
  [app, receiver, browser] = await Promise.all([startTestApp(), startReceiver(), launchChromium()]);
  // The recover form's default time is the browser's: the app's clock agrees with it.
  app.clock.set(new Date());
  ({ key } = await app.clinicWithKey('dental', ['webhooks:manage', 'chat:read']));
  context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: app.url });
  page = await context.newPage();
  page.on('request', (r) => {
    const url = new URL(r.url());
    if (!['http:', 'https:', 'ws:', 'wss:'].includes(url.protocol)) return;
    if (url.hostname !== '127.0.0.1' && url.hostname !== 'localhost') offHost.push(r.url());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
});

afterAll(async () => {
  await browser?.close();
  await receiver?.close();
});

/** Longer than a poll of the page (every 2 s). */
const SOON = { timeout: 5_000 };
const shot = (name: string) => page.screenshot({ path: `${SHOTS}/${name}.png` });
const text = (selector: string) => page.locator(selector).innerText();
const row = (hasText: string) => page.locator('#log tbody tr', { hasText });
const listed = () => page.locator(`#endpoints a[data-id="${endpointId}"]`);

/** Sends a test event of `type` from the page; answers the sample's event id. */
async function sendTest(type: string): Promise<string> {
  await page.locator('#test-type').selectOption(type);
  await page.getByRole('button', { name: 'Send', exact: true }).click();
  await expect.poll(() => text('#test-result')).toMatch(/^Sample evt_\d+ /);
  return (/^Sample (evt_\d+)/.exec(await text('#test-result')) as RegExpExecArray)[1];
}

describe.skipIf(!available)('the webhook portal in Chromium', () => {
  it('is a page of this origin only, with a strict policy, linked from /', async () => {
    const res = await fetch(`${app.url}/webhooks`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-cache');
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(await res.text()).not.toMatch(/<script>|<style|style=|https?:\/\//);
    const post = await fetch(`${app.url}/webhooks`, { method: 'POST' });
    expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
    expect((await fetch(`${app.url}/webhooks/assets/portal.0000000000000000.js`)).status).toBe(404);
    expect(await (await fetch(`${app.url}/`)).text()).toContain('href="/webhooks"');
  });

  it('takes a key once, and lists no endpoint yet', async () => {
    const assets: string[] = [];
    page.on('response', (r) => {
      if (new URL(r.url()).pathname.startsWith('/webhooks/assets/'))
        assets.push(
          `${new URL(r.url()).pathname.replace(/\.[0-9a-f]{16}\./, '.*.')} ${r.headers()['cache-control']}`,
        );
    });
    await page.goto(`${app.url}/webhooks`, { waitUntil: 'load' });
    // Its files are hashed and cached for good: the stylesheets and modules by concern.
    const immutable = 'public, max-age=31536000, immutable';
    expect(assets.sort()).toEqual(
      ['api.*.js', 'catalog.*.js', 'dom.*.js', 'endpoint-form.*.js', 'endpoint-view.*.js', 'endpoints.*.js']
        .concat([
          'gql.*.js',
          'key.*.js',
          'log.*.js',
          'page-base.*.css',
          'poll.*.js',
          'portal.*.css',
          'portal.*.js',
          'state.*.js',
          'views.*.css',
        ])
        .map((f) => `/webhooks/assets/${f} ${immutable}`),
    );
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('key-input');
    await shot('01-key');
    await page.getByLabel('Key with webhooks:manage').fill(`Bearer ${key}`);
    await page.getByRole('button', { name: 'Open the portal' }).click();
    await expect.poll(() => text('#live')).toBe('Live · every 2 s');
    expect(await page.locator('#list-empty').isVisible()).toBe(true);
    expect(await page.evaluate(() => Object.values(localStorage))).toEqual([key]);
  });

  it('adds an endpoint with types from the catalog; its secret is shown once and copied', async () => {
    await page.getByRole('link', { name: 'Add an endpoint' }).click();
    // A URL the service refuses is named at its field.
    await page.getByLabel('Endpoint URL').fill('ftp://example.com/hooks');
    await page.getByRole('button', { name: 'Add the endpoint' }).click();
    await expect.poll(() => text('#url-error')).not.toBe('');
    expect(await page.getByLabel('Endpoint URL').getAttribute('aria-invalid')).toBe('true');
    await page.getByLabel('Endpoint URL').fill(receiver.url);
    await page.getByLabel('Description (optional)').fill('Booking sync');
    await page.getByRole('checkbox', { name: /^appointment\.created/ }).check();
    await page.getByRole('checkbox', { name: /^patient\.created/ }).check();
    expect(await page.getByLabel('Only the types ticked below').isChecked()).toBe(true);
    await shot('02-add-form');
    await page.getByRole('button', { name: 'Add the endpoint' }).click();
    await page.locator('#secret').waitFor();
    endpointId = decodeURIComponent(new URL(page.url()).hash.slice(1));
    expect(endpointId).toMatch(/^wh_\d+$/);
    const secret = await page.locator('#secret-value').inputValue();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    await page.getByRole('button', { name: 'Copy' }).click();
    await expect.poll(() => text('#copy-result')).toBe('Copied.');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    receiver.secret = secret;
    expect(await text('#masked-secret')).toBe(`whsec_****${secret.replace(/=+$/, '').slice(-4)}`);
    await expect.poll(() => listed().innerText(), SOON).toContain('No attempts yet');
    expect(await listed().innerText()).toContain('Booking sync');
    await shot('03-secret-once');
    await page.getByRole('button', { name: 'I have stored it' }).click();
    expect(await page.locator('#secret').count()).toBe(0);
  });

  it('sends a test event; the attempt shows in the log without a reload', async () => {
    const sample = await sendTest('appointment.created');
    await receiver.waitFor(1);
    expect(receiver.accepted[0]).toMatchObject({ id: sample, type: 'appointment.created' });
    expect(receiver.accepted[0].body.test).toBe(true);
    await row(sample).waitFor({ timeout: 5_000 });
    const shown = await row(sample).innerText();
    expect(shown).toContain('Succeeded');
    expect(shown).toContain('HTTP 204');
    expect(shown).toMatch(/\d+ ms/);
    await expect.poll(() => listed().innerText(), SOON).toContain('Last attempt succeeded');
  });

  it('shows a failure with its status and response, the failure streak, and retries it', async () => {
    receiver.mode = { status: 500 };
    app.clock.advance(1000);
    const sample = await sendTest('patient.created');
    await row(sample).waitFor({ timeout: 5_000 });
    expect(await row(sample).innerText()).toMatch(/Failed\s+HTTP 500/);
    // What the receiver answered, and why the attempt counts as failed.
    expect((await row(sample).locator('td.response').innerText()).split(/\n+/)).toEqual([
      'not now',
      'The receiver answered status 500, not 2xx.',
    ]);
    await expect.poll(() => listed().innerText(), SOON).toMatch(/Failing: 1 attempt in a row since/);
    expect(await text('#streak')).toMatch(/Failing: 1 attempt in a row/);
    await shot('04-log-failed');

    receiver.mode = {};
    app.clock.advance(1000);
    await row(sample)
      .getByRole('button', { name: /^Retry/ })
      .click();
    await expect.poll(() => text('#log-result')).toMatch(/^Retry of whd_\d+ queued/);
    await receiver.waitFor(2);
    expect(receiver.accepted[1].id).toBe(sample);
    const retried = page.locator('#log tbody tr', { hasText: sample }).filter({ hasText: '2 · manual' });
    await retried.waitFor({ timeout: 5_000 });
    expect(await retried.innerText()).toContain('Succeeded');
    await expect.poll(() => listed().innerText(), SOON).toContain('Last attempt succeeded');
  });

  it('recovers the failed deliveries since a time', async () => {
    receiver.mode = { status: 503 };
    app.clock.advance(1000);
    const sample = await sendTest('appointment.created');
    await row(sample).waitFor({ timeout: 5_000 });
    receiver.mode = {};
    app.clock.advance(1000);
    // The form's default: 24 hours back.
    expect(await page.getByLabel('Since (your time)').inputValue()).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d$/);
    await page.getByRole('button', { name: 'Recover', exact: true }).click();
    await expect.poll(() => text('#recover-result')).toMatch(/^Queued/);
    await receiver.waitFor(3);
    expect(receiver.accepted[2].id).toBe(sample);
    await page
      .locator('#log tbody tr', { hasText: sample })
      .filter({ hasText: '2 · manual' })
      .waitFor({ timeout: 5_000 });
    await shot('05-log-recovered');
  });

  it('edits the endpoint: description, types, disabled with its reason; then enables it', async () => {
    await page.getByRole('link', { name: 'Edit', exact: true }).click();
    await page.getByLabel('Description (optional)').fill('Booking sync, appointments only');
    await page.getByRole('checkbox', { name: /^patient\.created/ }).uncheck();
    await page.getByLabel('Enabled: events are delivered').uncheck();
    await shot('06-edit-form');
    await page.getByRole('button', { name: 'Save the changes' }).click();
    await expect.poll(() => text('#endpoint-state'), SOON).toContain('Disabled');
    expect(await text('#disabled-reason')).toBe('Disabled by a change (enabled false).');
    expect(await text('#endpoint-state')).toContain('appointment.created');
    expect(await text('#endpoint-state')).not.toContain('patient.created');
    expect(await text('#endpoint-about')).toBe('Booking sync, appointments only');
    await expect.poll(() => listed().innerText(), SOON).toContain('Disabled');
    expect(await page.locator('#test-send').isDisabled()).toBe(true);
    await shot('07-disabled');
    await page.getByRole('button', { name: 'Enable', exact: true }).click();
    await expect.poll(() => listed().innerText(), SOON).toContain('Enabled');
    expect(await page.locator('#test-send').isDisabled()).toBe(false);
  });

  it('rotates the secret: the new one, shown once, is what the receiver verifies', async () => {
    const before = receiver.secret;
    await page.getByRole('button', { name: 'Rotate the secret' }).click();
    await page.locator('#secret').waitFor();
    const rotated = await page.locator('#secret-value').inputValue();
    expect(rotated).not.toBe(before);
    receiver.secret = rotated;
    const sample = await sendTest('appointment.created');
    await receiver.waitFor(4);
    expect(receiver.accepted[3].id).toBe(sample);
    await expect.poll(() => text('#endpoint-state'), SOON).toContain('the previous one also signs until');
    await page.getByRole('button', { name: 'I have stored it' }).click();
    expect(await page.locator('#secret').count()).toBe(0);
    // Shown once: a reload keeps the key and the endpoint open, not the secret.
    await page.reload({ waitUntil: 'load' });
    await row(sample).waitFor({ timeout: 5_000 });
    expect(await page.locator('#secret').count()).toBe(0);
    expect(await text('#masked-secret')).toMatch(/^whsec_\*{4}/);
    await shot('08-endpoint');
    // On a phone: the panes stack, the log scrolls sideways on its own, the page does not.
    const phone = await context.newPage();
    await phone.setViewportSize({ width: 390, height: 844 });
    await phone.goto(`${app.url}/webhooks#${endpointId}`, { waitUntil: 'load' });
    await phone.locator('#log tbody tr').first().waitFor();
    expect(await phone.evaluate(() => document.documentElement.scrollWidth - innerWidth)).toBeLessThanOrEqual(
      0,
    );
    await phone.locator('#log').scrollIntoViewIfNeeded();
    await phone.screenshot({ path: `${SHOTS}/09-phone-endpoint.png` });
    await phone.close();
  });

  it('shows the event catalog with a sample of every type', async () => {
    await page.getByRole('link', { name: 'Event catalog' }).click();
    await expect.poll(() => page.locator('#catalog li').count()).toBe(EVENT_TYPES.length);
    await expect.poll(() => page.locator('pre[data-sample]').first().textContent()).toMatch(/^\{/);
    for (const type of EVENT_TYPES) {
      const sample = JSON.parse((await page.locator(`pre[data-sample="${type}"]`).textContent()) ?? '');
      expect(sample.type, type).toBe(type);
    }
    expect(await page.locator('[id="type-chat.message.read"]').innerText()).toContain('needs chat:read');
    await page.locator('[id="type-appointment.created"] summary').click();
    await shot('10-catalog');
  });

  it('deletes the endpoint after asking', async () => {
    await listed().click();
    await page.locator('#endpoint-actions').waitFor();
    page.once('dialog', (d) => d.accept());
    await page.getByRole('button', { name: 'Delete' }).click();
    await expect.poll(() => page.locator('#endpoints li').count()).toBe(0);
    expect(await page.locator('#list-empty').isVisible()).toBe(true);
    expect((await app.get(`/v1/webhooks/${endpointId}`, key)).status).toBe(404);
  });

  it('says what a key lacks, and forgets the key', async () => {
    const chatOnly = await app.key((await app.clinicWithKey('dental', ['chat:read'])).clinicId, [
      'chat:read',
    ]);
    await page.getByRole('button', { name: 'Key', exact: true }).click();
    await page.getByLabel('Key with webhooks:manage').fill(chatOnly);
    await page.getByRole('button', { name: 'Open the portal' }).click();
    await expect
      .poll(() => text('#notice'))
      .toBe('The key has no webhooks:manage scope. Paste a key that has it.');
    expect(await text('#live')).toBe('Not connected');
    // A refused key is not kept (the working one it replaced is dropped too): a reload sends none.
    expect(await page.evaluate(() => Object.values(localStorage))).toEqual([]);
    await shot('11-refused');
    await page.getByRole('button', { name: 'Forget the key' }).click();
    expect(await page.evaluate(() => Object.values(localStorage))).toEqual([]);
    expect(offHost).toEqual([]);
    // The browser's console logs the refused request's 403; nothing else went wrong.
    expect(errors.filter((e) => !/status of 403/.test(e))).toEqual([]);
  });

  it('shows the catalog without a key, on a phone-sized screen too', async () => {
    const phone = await context.newPage();
    await phone.setViewportSize({ width: 390, height: 844 });
    await phone.goto(`${app.url}/webhooks#catalog`, { waitUntil: 'load' });
    await expect.poll(() => phone.locator('#catalog li').count()).toBe(EVENT_TYPES.length);
    expect(await phone.locator('#add').isHidden()).toBe(true);
    expect(await phone.evaluate(() => document.documentElement.scrollWidth - innerWidth)).toBeLessThanOrEqual(
      0,
    );
    await phone.screenshot({ path: `${SHOTS}/12-phone-catalog.png` });
    await phone.close();
  });
});
