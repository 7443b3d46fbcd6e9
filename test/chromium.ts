import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

/** Debian's Chromium (apt-get install chromium), or CHROMIUM_PATH. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const chromiumAvailable = existsSync(CHROMIUM);
// Said once per test file that imports this, so a skipped browser test is never silent.
if (!chromiumAvailable)
  console.warn(
    `browser tests skipped: no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`,
  );

/** Headless Chromium kept off the network it would reach for on its own (a fresh, temporary profile). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
