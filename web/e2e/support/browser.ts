import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { scaled } from '../../../test/support/wait.ts';

/** Debian's Chromium (web/e2e/install-chromium.sh installs it); playwright-core downloads none. */
export const CHROMIUM = '/usr/bin/chromium';

/**
 * Headless, no sandbox (CI runs as root), and none of the background connections to Google's
 * services, which this machine's closed network refuses many at a time.
 */
const FLAGS = [
  '--no-sandbox',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-gpu',
  '--no-first-run',
  '--disable-quic',
];

/** Where screenshots of each page go (git ignores test-results/). */
export const screenshotDir = path.resolve(import.meta.dirname, '..', '..', '..', 'test-results', 'screenshots');

export interface Browser {
  context: BrowserContext;
  /** Console errors, uncaught exceptions and CSP violations seen on any page so far. */
  problems: string[];
  newPage(options?: { width: number; height: number }): Promise<Page>;
  close(): Promise<void>;
}

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: run web/e2e/install-chromium.sh (Debian's chromium package)`);
  const userDataDir = mkdtempSync(path.join(tmpdir(), 'dragnet-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    acceptDownloads: true,
    viewport: { width: 1280, height: 800 },
    locale: 'en-GB',
  });
  // Playwright's 30 s for every wait and navigation, stretched on a slower machine as the suite's own deadlines are.
  context.setDefaultTimeout(scaled(30_000));
  const problems: string[] = [];
  const watch = (page: Page) => {
    page.on('console', (message) => {
      // Chromium logs every 4xx the API answers (otp_required, a validation error the page
      // shows): those are answers, not faults. 5xx responses are caught below.
      if (
        message.type() === 'error' &&
        !/^Failed to load resource: the server responded with a status of 4\d\d/.test(message.text())
      ) {
        problems.push(`${page.url()}: console: ${message.text()}`);
      }
    });
    page.on('response', (response) => {
      if (response.status() >= 500)
        problems.push(`${response.request().method()} ${response.url()}: ${response.status()}`);
    });
    page.on('pageerror', (error) => problems.push(`${page.url()}: ${error.message}`));
  };
  context.on('page', watch);
  context.pages().forEach(watch);
  return {
    context,
    problems,
    async newPage(size) {
      const page = await context.newPage();
      if (size) await page.setViewportSize(size);
      return page;
    },
    async close() {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

/** A full-page screenshot named after what it shows: test-results/screenshots/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(screenshotDir, { recursive: true });
  const file = path.join(screenshotDir, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/** Phone-sized viewport, to check the pages read on one. */
export const PHONE = { width: 390, height: 844 };
