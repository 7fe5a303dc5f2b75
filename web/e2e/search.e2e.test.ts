import { readFileSync } from 'node:fs';
import type { Download, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nextStepCode, totpCode } from '../../test/support/totp.ts';
import { launchChromium, PHONE, screenshot, type Browser } from './support/browser.ts';
import { startDashboardServer, type DashboardServer } from './support/dashboard-server.ts';

const QUERY = '"fresh logs" AND (acme-bank.com OR acmebank.net)';

/**
 * A newcomer's first session, in Debian's Chromium against the real server on the demo data:
 * sign in, turn on 2FA, sign in again with a code, search, load more, export in every format,
 * re-open the search from history. Screenshots of each page go to test-results/screenshots.
 */
describe('the dashboard in a browser: sign-in with 2FA, search and export', () => {
  let dashboard: DashboardServer;
  let browser: Browser;
  let page: Page;
  let seed: string;
  let total: number;

  beforeAll(async () => {
    [dashboard, browser] = await Promise.all([startDashboardServer(), launchChromium()]);
    page = await browser.newPage();
  });
  afterAll(async () => {
    await browser?.close();
    await dashboard?.stop();
  });

  const signIn = async (otp?: () => string) => {
    await page.getByLabel('Email').fill(dashboard.demo.email);
    await page.getByLabel('Password').fill(dashboard.demo.password);
    if (!otp) {
      await page.getByRole('button', { name: 'Sign in' }).click();
      return;
    }
    // The password alone is answered with a 401 (otp_required) that asks for the code.
    await browser.expecting([{ method: 'POST', path: '/token/', status: 401 }], async () => {
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByLabel('Authentication code').waitFor();
    });
    await screenshot(page, 'sign-in-code');
    await page.getByLabel('Authentication code').fill(otp());
    await page.getByRole('button', { name: 'Verify' }).click();
  };

  it('asks to sign in at the address a link opens, then shows that page', async () => {
    await page.goto(`${dashboard.baseUrl}/search/history`);
    await page.waitForURL(/\/sign-in\?redirect=/);
    await screenshot(page, 'sign-in');
    await signIn();
    await page.getByRole('heading', { name: 'Search history' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/search/history');
  });

  it('turns on 2FA in settings; signing in again asks for a code from the app', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
    await page.getByLabel('Your password').fill(dashboard.demo.password);
    await page.getByRole('button', { name: 'Set up two-factor authentication' }).click();
    seed = (await page.getByLabel('Key for manual entry').textContent())!.replaceAll(' ', '');
    await expect(page.getByRole('img', { name: /QR code/ }).getAttribute('src')).resolves.toMatch(
      /^data:image\/png;base64,/,
    );
    await screenshot(page, 'settings-security-2fa-setup');
    await page.getByLabel('Code from the app').fill(totpCode(seed, new Date()));
    await page.getByRole('button', { name: 'Turn on' }).click();
    await page.getByRole('list', { name: 'Backup codes' }).waitFor();
    expect(await page.getByRole('list', { name: 'Backup codes' }).getByRole('listitem').count()).toBe(10);
    await screenshot(page, 'settings-security-backup-codes');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/sign-in$/);
    // The code of the next 30-second step: the enrolment's own code is accepted only once.
    await signIn(() => nextStepCode(seed, new Date()));
    await page.getByRole('heading', { name: 'Search', exact: true }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/search');
  });

  it('searches the demo corpus: counts, marked terms, load more', async () => {
    await page.getByLabel('Query').fill(QUERY);
    await page.getByLabel('Query').press('Enter');
    const heading = page.getByRole('heading', { name: /matches? in/ });
    await heading.waitFor();
    total = Number((await heading.textContent())!.match(/^([\d,]+) match/)![1]!.replaceAll(',', ''));
    expect(total).toBeGreaterThan(0);
    const results = page.locator('li.result');
    const shown = await results.count();
    expect(shown).toBe(Math.min(total, 20));
    const marks = await results.first().locator('mark').allTextContents();
    expect(marks.map((mark) => mark.toLowerCase())).toEqual(expect.arrayContaining(['fresh logs']));
    await screenshot(page, 'search-results');

    if (total > shown) {
      await page.getByRole('button', { name: 'Load more' }).click();
      await expect.poll(() => results.count()).toBe(Math.min(total, 40));
      await expect(page.evaluate(() => document.activeElement?.classList.contains('result'))).resolves.toBe(true);
    }
  });

  it.each([
    ['csv', (body: Buffer) => expect(body.subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]))],
    [
      'json',
      (body: Buffer) => expect((JSON.parse(body.toString()) as { results: unknown[] }).results).toHaveLength(total),
    ],
    ['xml', (body: Buffer) => expect(body.toString().match(/<message>/g)).toHaveLength(total)],
    ['pdf', (body: Buffer) => expect(body.subarray(0, 5).toString()).toBe('%PDF-')],
  ] as const)('exports the search as %s, a file named by the server', async (format, check) => {
    const [download] = await Promise.all([
      page.waitForEvent('download') as Promise<Download>,
      page.getByRole('button', { name: format.toUpperCase(), exact: true }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(new RegExp(`^dragnet-search-\\d+\\.${format}$`));
    check(readFileSync((await download.path())!));
  });

  it('lists the search in history and re-opens it as it ran', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'History' }).click();
    await page
      .getByRole('link', { name: `Open the search ${QUERY}` })
      .first()
      .click();
    await page.getByRole('heading', { name: /matches? in/ }).waitFor();
    expect(await page.getByLabel('Query').inputValue()).toBe(QUERY);
    await page.goBack();
    await page.getByRole('heading', { name: 'Search history' }).waitFor();
    await screenshot(page, 'search-history');
  });

  it('reads on a phone: the search page fits the screen width', async () => {
    const phone = await browser.newPage(PHONE);
    await phone.goto(`${dashboard.baseUrl}/search`);
    await phone.getByLabel('Query').fill(QUERY);
    await phone.getByRole('button', { name: 'Search', exact: true }).click();
    await phone.getByRole('heading', { name: /matches? in/ }).waitFor();
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    await screenshot(phone, 'search-results-phone');
    await phone.close();
  });

  it('raised no error in the browser (console, uncaught, content security policy, unexpected 4xx/5xx)', () => {
    expect(browser.problems).toEqual([]);
  });
});
