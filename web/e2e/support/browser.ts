import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type ConsoleMessage, type Page, type Response } from 'playwright-core';
import { scaled, waitFor } from '../../../test/support/wait.ts';

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

/** An error answer a test causes on purpose: a wrong password, the 401 that asks for a 2FA code. */
export interface ExpectedResponse {
  status: number;
  /** The URL's path, e.g. `/token/`. */
  path: string;
  method?: string;
}

export interface Browser {
  context: BrowserContext;
  /**
   * Console errors (the lines Chromium logs for 4xx answers included), uncaught exceptions, CSP
   * violations and every answer of 400 or more seen on any page so far, except those a test
   * expected (`expecting`). Each file ends by asserting it is empty.
   */
  problems: string[];
  /**
   * Runs `steps`, during which the `expected` error answers are what the test meant to cause
   * rather than problems; fails unless each of them came.
   */
  expecting(expected: ExpectedResponse[], steps: () => Promise<void>): Promise<void>;
  newPage(options?: { width: number; height: number }): Promise<Page>;
  close(): Promise<void>;
}

/** Chromium's console line for an error answer; the URL is the message's location. */
const FAILED_RESOURCE = /^Failed to load resource: the server responded with a status of (\d{3})\b/;

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
  let expected: { response: ExpectedResponse; seen: number }[] = [];
  // "status URL" of the answers that were expected: Chromium's console line for each is not a problem either.
  const expectedAnswers = new Set<string>();
  const isExpected = (response: Response) => {
    const { pathname } = new URL(response.url());
    const method = response.request().method();
    const match = expected.find(
      ({ response: e }) => e.status === response.status() && e.path === pathname && (e.method ?? method) === method,
    );
    if (match) match.seen++;
    return match !== undefined;
  };
  const consoleProblem = (message: ConsoleMessage) => {
    const status = FAILED_RESOURCE.exec(message.text())?.[1];
    if (status && expectedAnswers.has(`${status} ${message.location().url}`)) return;
    problems.push(`console: ${message.text()} (${message.location().url})`);
  };
  const watch = (page: Page) => {
    page.on('console', (message) => {
      if (message.type() === 'error') consoleProblem(message);
    });
    page.on('response', (response) => {
      if (response.status() < 400) return;
      if (isExpected(response)) expectedAnswers.add(`${response.status()} ${response.url()}`);
      else problems.push(`${response.request().method()} ${response.url()}: ${response.status()}`);
    });
    page.on('pageerror', (error) => problems.push(`${page.url()}: ${error.message}`));
  };
  context.on('page', watch);
  context.pages().forEach(watch);
  return {
    context,
    problems,
    async expecting(responses, steps) {
      const scope = responses.map((response) => ({ response, seen: 0 }));
      expected = [...expected, ...scope];
      try {
        await steps();
        for (const entry of scope) {
          const { method = 'a request to', path: where, status } = entry.response;
          await waitFor(`${method} ${where} answering ${status}`, () => entry.seen > 0);
        }
      } finally {
        expected = expected.filter((entry) => !scope.includes(entry));
      }
    },
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
