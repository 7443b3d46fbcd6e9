import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, revokeApiKey } from '../src/auth/keys.ts';
import { chromiumAvailable, launchChromium } from './chromium.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * The live inbox at /inbox in a real headless Chromium (Debian's `chromium`): keys pasted once
 * and kept, a patient's message shown without a reload, a reply sent from the page whose ticks
 * move with the sandbox's receipts, and a revoked key said plainly, live and on a reload. The
 * page makes no request to another host and throws nothing.
 */
const available = chromiumAvailable;

let app: TestApp;
let browser: Browser;
let clinicId: number;
let readKey: string;
let writeKey: string;

// Receipts slow enough to see each tick: sent, delivered, read.
const DELAYS = { sent: 400, delivered: 900, read: 1400 };

beforeAll(async () => {
  if (!available) return;
  app = await startTestApp({ sandboxDelays: DELAYS });
  // The subscriptions judge the 24-hour window by the wall clock: the app's clock agrees with it.
  app.clock.set(new Date());
  ({ clinicId, key: readKey } = await app.clinicWithKey('dental', ['chat:read']));
  writeKey = await app.key(clinicId, ['chat:write']);
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
});

// A test that failed half-way leaves no page subscribed: the next one counts the hub's listeners.
const pages: Page[] = [];
afterEach(async () => {
  for (const page of pages.splice(0)) await page.close();
});

/** A patient writes to the clinic through the sandbox network (its signed callback). */
async function patientWrites(from: string, text: string, name?: string): Promise<string> {
  const r = await app.gql(
    'mutation($from: String!, $text: String!, $name: String) { sandboxInbound(input: { from: $from, text: $text, name: $name }) { message { id conversationId } } }',
    { from, text, name },
    writeKey,
  );
  expect(r.body.errors, JSON.stringify(r.body.errors)).toBeUndefined();
  return r.body.data.sandboxInbound.message.conversationId;
}

async function watchedPage(
  options: { bypassCSP?: boolean } = {},
): Promise<{ page: Page; offHost: string[]; errors: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1100, height: 700 }, ...options });
  pages.push(page);
  const offHost: string[] = [];
  const errors: string[] = [];
  page.on('request', (r) => {
    const url = new URL(r.url());
    if (!['http:', 'https:', 'ws:', 'wss:'].includes(url.protocol)) return;
    if (url.hostname !== '127.0.0.1' && url.hostname !== 'localhost') offHost.push(r.url());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  return { page, offHost, errors };
}

async function pasteKeys(page: Page, read: string, write?: string) {
  await page.getByLabel('Reading key').fill(read);
  if (write) await page.getByLabel('Replying key').fill(write);
  await page.getByRole('button', { name: 'Open the inbox' }).click();
}

const conversationLink = (page: Page, id: string) => page.locator(`#conversations a[data-id="${id}"]`);
const hubSize = () => app.server.app.eventHub.size;

describe.skipIf(!available)('the live inbox in Chromium', () => {
  it('is a page of this origin only, revalidated on each visit', async () => {
    const page = await fetch(`${app.url}/inbox`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('cache-control')).toBe('no-cache');
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(await page.text()).not.toMatch(/<script>|https?:\/\//);
    const post = await fetch(`${app.url}/inbox`, { method: 'POST' });
    expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
    expect((await fetch(`${app.url}/inbox/assets/inbox.0000000000000000.js`)).status).toBe(404);
  });

  it('shows a new message without a reload, and a reply from the page moves through its ticks', async () => {
    const first = await patientWrites('050-111-0001', 'Is the clinic open on Friday?');
    const { page, offHost, errors } = await watchedPage();
    const assets: { path: string; cacheControl?: string }[] = [];
    page.on('response', (r) => {
      const path = new URL(r.url()).pathname;
      if (path.startsWith('/inbox/assets/'))
        assets.push({ path, cacheControl: r.headers()['cache-control'] });
    });
    await page.goto(`${app.url}/inbox`, { waitUntil: 'load' });
    // No key yet: the page asks for them, and the reading one has focus.
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('read-key');
    await pasteKeys(page, readKey, writeKey);
    // The keys form gone, the focus is on the first conversation.
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('data-id'))).toBe(first);
    await expect(conversationLink(page, first).innerText()).resolves.toContain(
      'Is the clinic open on Friday?',
    );
    await expect.poll(() => page.locator('#live').innerText(), { timeout: 5_000 }).toBe('Live');
    // graphql-ws's browser build is the console's file, served the same way; the script is
    // modules by concern, each fetched once.
    expect(assets.map((a) => a.path.replace(/\.[0-9a-f]{16}\./, '.*.')).sort()).toEqual([
      '/inbox/assets/api.*.js',
      '/inbox/assets/dom.*.js',
      '/inbox/assets/gql.*.js',
      '/inbox/assets/graphql-ws.*.js',
      '/inbox/assets/inbox.*.css',
      '/inbox/assets/inbox.*.js',
      '/inbox/assets/keys.*.js',
      '/inbox/assets/page-base.*.css',
      '/inbox/assets/render.*.js',
      '/inbox/assets/reply.*.js',
      '/inbox/assets/state.*.js',
    ]);
    for (const a of assets) expect(a.cacheControl).toBe('public, max-age=31536000, immutable');

    // The list is live: a new patient's message shows within 2 s, without a reload.
    await expect.poll(hubSize, { timeout: 5_000 }).toBe(1);
    const written = Date.now();
    const second = await patientWrites('050-111-0002', 'I need to move my appointment');
    await conversationLink(page, second).waitFor({ timeout: 2_000 });
    expect(await conversationLink(page, second).innerText()).toContain('I need to move my appointment');
    expect(Date.now() - written).toBeLessThan(2_000);
    // Most recent activity first.
    expect(await page.locator('#conversations a').first().getAttribute('data-id')).toBe(second);

    // Opened from the keyboard: the thread shows it and follows it live.
    await conversationLink(page, second).focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('#thread-title').innerText()).toBe('0501110002');
    await expect.poll(() => page.locator('#messages').innerText()).toContain('I need to move my appointment');
    await expect.poll(hubSize, { timeout: 5_000 }).toBe(2);
    // The patient just wrote: the reply box says the text goes out as it is (the 24-hour window).
    expect(await page.locator('#reply-hint').innerText()).toMatch(/until .+ the text goes out as it is/);
    const again = Date.now();
    await patientWrites('050-111-0002', 'Thursday would suit me');
    await page.locator('#messages li', { hasText: 'Thursday would suit me' }).waitFor({ timeout: 2_000 });
    expect(Date.now() - again).toBeLessThan(2_000);

    // A reply: queued at once, then each receipt's tick as it arrives.
    await page.evaluate(() => {
      const seen: string[] = [];
      (window as any).seenStatuses = seen;
      new MutationObserver(() => {
        const status = document.querySelector('#messages li.out')?.getAttribute('data-status');
        if (status && seen.at(-1) !== status) seen.push(status);
      }).observe(document.querySelector('#messages') as Node, {
        subtree: true,
        childList: true,
        attributes: true,
      });
    });
    await page.getByLabel('Reply to 0501110002').fill('Thursday at 10:00 is yours');
    await page.keyboard.press('Control+Enter');
    const reply = page.locator('#messages li.out', { hasText: 'Thursday at 10:00 is yours' });
    await reply.waitFor({ timeout: 5_000 });
    await expect.poll(() => reply.getAttribute('data-status'), { timeout: 10_000 }).toBe('DELIVERED');
    await page.screenshot({ path: '/tmp/inbox-delivered.png' });
    await expect.poll(() => reply.getAttribute('data-status'), { timeout: 10_000 }).toBe('READ');
    expect(await page.evaluate(() => (window as any).seenStatuses)).toEqual([
      'QUEUED',
      'SENT',
      'DELIVERED',
      'READ',
    ]);
    expect(await page.getByLabel('Reply to 0501110002').inputValue()).toBe('');
    await page.screenshot({ path: '/tmp/inbox-read.png' });

    // The keys are kept: a reload opens the inbox at the same conversation.
    await page.reload({ waitUntil: 'load' });
    await expect.poll(() => page.locator('#messages').innerText()).toContain('Thursday at 10:00 is yours');
    expect(await page.locator('#keys').isHidden()).toBe(true);
    expect(offHost).toEqual([]);
    expect(errors).toEqual([]);
  }, 60_000);

  it('after a lost connection, reconnects and shows what happened while it was away', async () => {
    const away = await patientWrites('050-111-0004', 'Before the drop');
    const { page, errors } = await watchedPage();
    // The page's websockets go through the test, which can cut them and refuse new ones.
    let refuse = false;
    const open: { close(): Promise<void> }[] = [];
    await page.routeWebSocket(/\/graphql$/, (ws) => {
      if (refuse) return void ws.close({ code: 1012, reason: 'test: still away' });
      const server = ws.connectToServer();
      open.push({
        close: () => ws.close({ code: 1012, reason: 'test: dropped' }).then(() => server.close()),
      });
    });
    await page.goto(`${app.url}/inbox#${away}`, { waitUntil: 'load' });
    await pasteKeys(page, readKey, writeKey);
    await expect.poll(() => page.locator('#messages').innerText()).toContain('Before the drop');
    await expect.poll(() => page.locator('#live').innerText(), { timeout: 5_000 }).toBe('Live');
    await expect.poll(hubSize, { timeout: 5_000 }).toBe(2);

    refuse = true;
    for (const socket of open.splice(0)) await socket.close();
    await expect.poll(() => page.locator('#live').innerText(), { timeout: 5_000 }).toBe('Reconnecting…');
    await expect.poll(hubSize, { timeout: 5_000 }).toBe(0);
    // No socket hears these: only reading again after the reconnection can show them.
    await patientWrites('050-111-0004', 'Written while the inbox was away');
    const other = await patientWrites('050-111-0005', 'A new patient meanwhile');
    refuse = false;
    await expect.poll(() => page.locator('#live').innerText(), { timeout: 15_000 }).toBe('Live');
    await expect
      .poll(() => page.locator('#messages').innerText(), { timeout: 5_000 })
      .toContain('Written while the inbox was away');
    await conversationLink(page, other).waitFor({ timeout: 5_000 });
    // And it is live again.
    await expect.poll(hubSize, { timeout: 5_000 }).toBe(2);
    await patientWrites('050-111-0004', 'Back again');
    await page.locator('#messages li', { hasText: 'Back again' }).waitFor({ timeout: 2_000 });
    expect(errors.filter((e) => !/WebSocket/.test(e))).toEqual([]);
  }, 60_000);

  it("shows a patient's markup as text and runs none of it", async () => {
    const name = '<img src=x onerror="window.__pwned=2"><i>Dr</i>';
    const attack = '<img src=x onerror="window.__pwned=1">';
    const id = await patientWrites('050-111-0006', attack, name);
    await patientWrites('050-111-0006', '<b>bold</b>');
    // Without the page's Content-Security-Policy, which alone would stop the inline handlers:
    // what is tested is that the texts are never parsed as HTML.
    const { page, errors } = await watchedPage({ bypassCSP: true });
    await page.goto(`${app.url}/inbox#${id}`, { waitUntil: 'load' });
    await pasteKeys(page, readKey, writeKey);
    await expect.poll(() => page.locator('#messages').innerText()).toContain('<b>bold</b>');
    expect(await page.locator('#messages').innerText()).toContain(attack);
    expect(await page.locator('#thread-title').innerText()).toBe(name);
    expect(await page.locator('#reply-label').innerText()).toBe(`Reply to ${name}`);
    const link = await conversationLink(page, id).innerText();
    expect(link).toContain(name);
    expect(link).toContain('<b>bold</b>');
    // A new message shown live is text too.
    await expect.poll(hubSize, { timeout: 5_000 }).toBe(2);
    await patientWrites('050-111-0006', '<img src=y onerror="window.__pwned=3"> live');
    await page.locator('#messages li', { hasText: 'live' }).waitFor({ timeout: 2_000 });
    expect(await page.locator('#messages').innerText()).toContain(
      '<img src=y onerror="window.__pwned=3"> live',
    );
    expect(await page.locator('main img, main b, main i').count()).toBe(0);
    expect(await page.evaluate(() => (window as any).__pwned)).toBeUndefined();
    expect(errors).toEqual([]);
  }, 60_000);

  it('reads a right-to-left message from the right, its punctuation at its end, and the reply box as typed', async () => {
    const hebrew = 'שלום, אפשר לקבוע תור למחר?';
    const id = await patientWrites('050-111-0010', hebrew, 'דנה כהן');
    await patientWrites('050-111-0010', 'And one in English.');
    const { page, errors } = await watchedPage();
    await page.goto(`${app.url}/inbox#${id}`, { waitUntil: 'load' });
    await pasteKeys(page, readKey, writeKey);
    const body = (text: string) => page.locator('#messages .body', { hasText: text });
    await body(hebrew).waitFor({ timeout: 5_000 });
    const direction = (l: Locator) => l.evaluate((el) => (el.matches(':dir(rtl)') ? 'rtl' : 'ltr'));
    expect(await direction(body(hebrew))).toBe('rtl');
    expect(await direction(body('And one in English.'))).toBe('ltr');
    expect(await direction(page.locator('#thread-title'))).toBe('rtl');
    expect(await direction(conversationLink(page, id).locator('.name'))).toBe('rtl');
    expect(await direction(conversationLink(page, id).locator('.preview'))).toBe('ltr');
    // Where the sentence ends: its question mark left of its first letter, not right of its last.
    const [first, last] = await body(hebrew).evaluate((el) => {
      const text = [...el.childNodes].find((n) => n.nodeType === Node.TEXT_NODE) as Text;
      const x = (i: number) => {
        const r = document.createRange();
        r.setStart(text, i);
        r.setEnd(text, i + 1);
        return r.getBoundingClientRect().x;
      };
      return [x(0), x(text.length - 1)];
    });
    expect(last).toBeLessThan(first);
    await page.screenshot({ path: '/tmp/inbox-rtl.png' });
    // The reply box takes the direction of what is typed in it.
    const reply = page.locator('#reply-text');
    await reply.fill('תודה, נתראה!');
    expect(await direction(reply)).toBe('rtl');
    await reply.fill('Thanks, see you!');
    expect(await direction(reply)).toBe('ltr');
    expect(errors).toEqual([]);
  }, 60_000);

  it('takes a malformed address (#%E0) for no conversation, on load and on a change', async () => {
    const id = await patientWrites('050-111-0007', 'Hello from a well-formed conversation');
    const { page, errors } = await watchedPage();
    await page.goto(`${app.url}/inbox#%E0`, { waitUntil: 'load' });
    await pasteKeys(page, readKey);
    await conversationLink(page, id).waitFor({ timeout: 5_000 });
    await expect.poll(() => page.locator('#live').innerText(), { timeout: 5_000 }).toBe('Live');
    expect(await page.locator('#thread-title').innerText()).toBe('Choose a conversation');
    await conversationLink(page, id).click();
    await expect
      .poll(() => page.locator('#messages').innerText())
      .toContain('Hello from a well-formed conversation');
    // Typed into the address bar while a conversation is open: the thread closes.
    await page.evaluate(() => {
      location.hash = '%E0';
    });
    await expect.poll(() => page.locator('#thread-title').innerText()).toBe('Choose a conversation');
    expect(await page.locator('#messages li').count()).toBe(0);
    expect(await page.locator('#reply').isHidden()).toBe(true);
    expect(errors).toEqual([]);
  }, 60_000);

  it('forgets both keys on "Forget the keys": nothing of them is left in the browser', async () => {
    await patientWrites('050-111-0008', 'Soon out of sight');
    const { page, errors } = await watchedPage();
    await page.goto(`${app.url}/inbox`, { waitUntil: 'load' });
    await pasteKeys(page, readKey, writeKey);
    await expect.poll(() => page.locator('#live').innerText(), { timeout: 5_000 }).toBe('Live');
    const stored = () => page.evaluate(() => Object.values(localStorage).sort());
    expect(await stored()).toEqual([readKey, writeKey].sort());

    await page.getByRole('button', { name: 'Keys' }).click();
    await page.getByRole('button', { name: 'Forget the keys' }).click();
    await expect
      .poll(() => page.locator('#notice').innerText())
      .toBe('The keys are forgotten in this browser.');
    expect(await stored()).toEqual([]);
    expect(await page.locator('#live').innerText()).toBe('Not connected');
    expect(await page.locator('#conversations li').count()).toBe(0);
    expect(await page.getByLabel('Reading key').inputValue()).toBe('');
    expect(await page.getByLabel('Replying key').inputValue()).toBe('');
    await expect.poll(hubSize, { timeout: 5_000 }).toBe(0);

    // Nothing to start from on a reload: the page asks for keys.
    await page.reload({ waitUntil: 'load' });
    expect(await page.locator('#keys').isVisible()).toBe(true);
    expect(await page.getByLabel('Reading key').inputValue()).toBe('');
    expect(await page.locator('#conversations li').count()).toBe(0);
    expect(errors).toEqual([]);
  }, 60_000);

  it('says so when the reading key is revoked, live and on a reload', async () => {
    const made = await createApiKey(app.orm.em.fork(), {
      clinicId,
      name: 'soon revoked',
      scopes: ['chat:read'],
    });
    await patientWrites('050-111-0003', 'Hello?');
    const { page, errors } = await watchedPage();
    await page.goto(`${app.url}/inbox`, { waitUntil: 'load' });
    await pasteKeys(page, made.key);
    await expect.poll(() => page.locator('#live').innerText(), { timeout: 5_000 }).toBe('Live');
    // Without a replying key the reply box says what it needs.
    await page.locator('#conversations a').first().click();
    await expect.poll(() => page.locator('#reply-hint').innerText()).toContain('needs a chat:write key');
    expect(await page.getByLabel(/^Reply to/).isDisabled()).toBe(true);

    // The thread read (its HTTP request done), so only the live connection hears of the revocation.
    await expect.poll(() => page.locator('#messages').innerText()).toContain('Hello?');
    await revokeApiKey(app.orm.em.fork(), made.id);
    await expect
      .poll(() => page.locator('#notice').innerText(), { timeout: 5_000 })
      .toBe('The reading key was revoked: the inbox stopped updating. Paste a current chat:read key.');
    expect(await page.locator('#live').innerText()).toBe('Not connected');
    expect(await page.locator('#keys').isVisible()).toBe(true);
    await page.screenshot({ path: '/tmp/inbox-revoked.png' });

    await page.reload({ waitUntil: 'load' });
    await expect
      .poll(() => page.locator('#notice').innerText(), { timeout: 5_000 })
      .toBe(
        'The reading key was refused: it is unknown, mistyped or revoked. Paste a current chat:read key.',
      );
    // A chat:write key in the reading field is named for what it lacks.
    await pasteKeys(page, writeKey);
    await expect
      .poll(() => page.locator('#notice').innerText(), { timeout: 5_000 })
      .toContain('has no chat:read scope');
    // The browser's console logs the refused requests' 401 and 403; nothing else went wrong.
    expect(errors.filter((e) => !/status of 40[13]/.test(e))).toEqual([]);
  }, 60_000);
});
