import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, screenshot, type Browser } from './support/browser.ts';
import { signInAsDemo, startDashboardServer, type DashboardServer } from './support/dashboard-server.ts';

/**
 * An analyst's start of the day on the demo data, in Debian's Chromium: the home page, then a
 * quick search of the watched domain.
 */
describe('the dashboard in a browser: the home page and a quick search', () => {
  let dashboard: DashboardServer;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    [dashboard, browser] = await Promise.all([startDashboardServer(), launchChromium()]);
    page = await browser.newPage();
  });
  afterAll(async () => {
    await browser?.close();
    await dashboard?.stop();
  });

  it("opens on the home page with each source's newest data", async () => {
    await page.goto(`${dashboard.baseUrl}/`);
    await page.waitForURL(/\/sign-in/);
    await signInAsDemo(page, dashboard);
    await page.getByRole('heading', { name: 'Home' }).waitFor();
    const sources = page.getByRole('table', { name: 'Newest data per source' });
    await sources.waitFor();
    // `dragnet demo` stores data for every source.
    expect(await sources.getByRole('row').count()).toBe(16);
    expect(await sources.getByText('No data yet').count()).toBe(0);
    await page.getByRole('heading', { name: 'New incidents' }).waitFor();
    await screenshot(page, 'home');
  });

  it('runs a domain quick search: the newest sightings with masked passwords, one search less left', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Quick searches' }).click();
    const quota = page.getByTestId('quota-domain_quick_search');
    await expect(quota.textContent()).resolves.toMatch(/^100 of 100 searches left today/);
    const form = page.getByRole('form', { name: 'Domain' });
    await form.getByLabel('Domain').fill('acme-bank.com');
    await form.getByRole('button', { name: 'Search' }).click();
    const sightings = page.getByRole('table', { name: 'Newest sightings of acme-bank.com' });
    await sightings.waitFor();
    expect(await sightings.getByRole('row').count()).toBeGreaterThan(1);
    for (const password of await sightings.locator('code').allTextContents()) expect(password).toMatch(/^.?\*+.?$/);
    await page.getByText(/^99 of 100 searches left today/).waitFor();
    await screenshot(page, 'quick-search-domain');
  });
});
