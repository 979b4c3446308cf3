import { accessSync, constants } from 'node:fs';
import puppeteer, { type Browser } from 'puppeteer-core';

// Debian's package (scripts/setup-chromium.mjs installs it); the driver never downloads a browser.
const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/lib/chromium/chromium'];

/** The Chromium binary, or a loud failure: the report tests must not silently skip without it. */
export function chromiumPath(): string {
  for (const p of CANDIDATES) {
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // next
    }
  }
  throw new Error(`No Chromium at ${CANDIDATES.join(', ')}: run \`npm run setup:chromium\` (installs Debian's chromium package as root) and retry.`);
}

/** A headless Chromium for one test file; closed by the returned browser's close(). */
export async function launchChromium(): Promise<Browser> {
  return puppeteer.launch({
    executablePath: chromiumPath(),
    headless: true,
    // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run', '--no-default-browser-check'],
  });
}
