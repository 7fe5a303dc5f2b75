import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_RATE_LIMITS } from '../../test/support/delivery-api.ts';
import { launchChromium, screenshot, type Browser } from './support/browser.ts';
import { signInAsDemo, startDashboardServer, type DashboardServer } from './support/dashboard-server.ts';
import { demoApi } from './support/demo-incident.ts';

interface CatalogRow {
  id: number;
  name: string;
  has_data: boolean;
  args_schema: { params: { name: string; example?: unknown }[] };
}

/** A labelled fact of a presenter: the text of the `dd` after the `dt` named `label`. */
const fact = (hit: Locator, label: string) => hit.locator(`dt:text-is("${label}") + dd`).first().textContent();

/**
 * What each source's hit must look like in the browser: the element a person looks for first.
 * The same promise as the component test (presenters.test.tsx), here in Debian's Chromium
 * against `npm start` with `dragnet demo`'s data, each source's incident made by a rule with the
 * catalog's example args.
 */
const looksFor: Record<string, (hit: Locator) => Promise<unknown>> = {
  messenger: (hit) => hit.getByRole('button', { name: 'Open in context (the channel)' }).waitFor(),
  chat_server: (hit) => hit.getByRole('button', { name: 'Open in context (the channel)' }).waitFor(),
  hacker_forum: (hit) => hit.getByRole('button', { name: 'Open in context (the thread)' }).waitFor(),
  paste_site: (hit) => hit.getByRole('link', { name: 'Open the paste' }).waitFor(),
  filtered_leak: (hit) => hit.getByRole('button', { name: /^Reveal the password/ }).waitFor(),
  distinct_leak: (hit) => hit.getByRole('button', { name: /^Reveal the password/ }).waitFor(),
  raw_leak_extended: (hit) => hit.getByLabel('Line').waitFor(),
  credit_card: async (hit) => expect(await fact(hit, 'Card')).toMatch(/^\d{6}\*+\d{4}$/),
  bin_cvv: async (hit) => expect(await fact(hit, 'Card')).toMatch(/^\d{6}\*+\d{4}$/),
  phishing: (hit) => hit.getByText(/imitates/).waitFor(),
  certificate: (hit) => hit.getByRole('list', { name: 'Names in the certificate' }).locator('mark').first().waitFor(),
  ransomware: async (hit) => expect(await fact(hit, 'Group')).toBeTruthy(),
  app_store: async (hit) => expect(await fact(hit, 'Developer')).toBeTruthy(),
  cloud_bucket: async (hit) => expect(await fact(hit, 'Object')).toContain('/'),
  url_shortener: async (hit) => expect(await fact(hit, 'Leads to')).toMatch(/^https?:\/\//),
};

describe('the dashboard in a browser: every source’s hit on its incident page', () => {
  let dashboard: DashboardServer;
  let browser: Browser;
  let page: Page;
  const incidents = new Map<string, number>();

  beforeAll(async () => {
    // Fifteen rules made one after the other: the per-second cap is not what this suite checks.
    [dashboard, browser] = await Promise.all([startDashboardServer(NO_RATE_LIMITS), launchChromium()]);
    page = await browser.newPage();
    const api = await demoApi(dashboard);
    const catalog = (await api.get('/service/alert_system_service_get_service_list/')) as unknown as CatalogRow[];
    for (const row of catalog.filter((entry) => entry.has_data)) {
      const args = Object.fromEntries(
        row.args_schema.params.filter((param) => param.example !== undefined).map((p) => [p.name, p.example]),
      );
      incidents.set(row.name, (await api.incident(row.id, args, `example ${row.name}`)).matchId);
    }
    await page.goto(`${dashboard.baseUrl}/sign-in`);
    await signInAsDemo(page, dashboard);
    await page.waitForURL((url) => url.pathname !== '/sign-in');
  });
  afterAll(async () => {
    await browser?.close();
    await dashboard?.stop();
  });

  it('has an incident of each of the 15 sources', () => {
    expect([...incidents.keys()].sort()).toEqual(Object.keys(looksFor).sort());
  });

  for (const [name, check] of Object.entries(looksFor)) {
    it(`${name}: the hit shows what it is, and no internal field`, async () => {
      await page.goto(`${dashboard.baseUrl}/incidents/${incidents.get(name)}`);
      const hit = page.getByRole('article').first();
      await hit.waitFor();
      await check(hit);
      expect(await hit.textContent()).not.toMatch(/\b(text_hash|hit_key|password_sealed|Text hash|Hit key)\b/);
      await screenshot(page, `presenter-${name}`);
    });
  }

  it('saw no console error or failed request on the way', () => {
    expect(browser.problems).toEqual([]);
  });
});
