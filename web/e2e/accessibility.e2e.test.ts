import axe from 'axe-core';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_RATE_LIMITS } from '../../test/support/delivery-api.ts';
import { launchChromium, type Browser } from './support/browser.ts';
import { signInAsDemo, startDashboardServer, type DashboardServer } from './support/dashboard-server.ts';
import { createDemoIncident } from './support/demo-incident.ts';

interface Violation {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

/**
 * axe-core's checks (WCAG 2.1 A and AA, and its best practices) on the page as it is drawn. The
 * script goes in through the DevTools protocol, which the page's Content-Security-Policy (no
 * inline scripts) does not apply to.
 */
async function seriousViolations(page: Page): Promise<Violation[]> {
  await page.evaluate(`${axe.source};0`);
  const violations = await page.evaluate(async () => {
    const { violations } = await (window as unknown as { axe: typeof axe }).axe.run(document, {
      resultTypes: ['violations'],
    });
    return violations.map((violation) => ({
      id: violation.id,
      impact: violation.impact ?? null,
      help: violation.help,
      targets: violation.nodes.map((node) => node.target.join(' ')),
    }));
  });
  return violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
}

/**
 * Every main page of the dashboard, drawn with the demo data and a rule's incident, checked with
 * axe-core in Debian's Chromium: no serious or critical violation, in light and dark colours.
 */
describe('the dashboard in a browser: accessibility of every main page', () => {
  let dashboard: DashboardServer;
  let browser: Browser;
  let page: Page;
  const ids = { rule: 0, match: 0 };

  beforeAll(async () => {
    // Page after page in both colour schemes, faster than a person: the organization's
    // 25-per-second cap is not what this suite checks.
    [dashboard, browser] = await Promise.all([startDashboardServer(NO_RATE_LIMITS), launchChromium()]);
    page = await browser.newPage();
    ({ ruleId: ids.rule, matchId: ids.match } = await createDemoIncident(dashboard));
  });
  afterAll(async () => {
    await browser?.close();
    await dashboard?.stop();
  });

  const pages: [name: string, path: () => string, ready: (page: Page) => Promise<unknown>][] = [
    ['home', () => '/', (p) => p.getByRole('table', { name: 'Newest data per source' }).waitFor()],
    ['search', () => '/search', (p) => p.getByRole('heading', { name: 'Search', exact: true }).waitFor()],
    ['quick searches', () => '/search/quick', (p) => p.getByRole('heading', { level: 1 }).waitFor()],
    ['search results', () => '/search', searchSomething],
    ['source search', sourceSearchPath, (p) => p.getByRole('article').first().waitFor()],
    ['search history', () => '/search/history', (p) => p.getByRole('heading', { name: 'Search history' }).waitFor()],
    [
      'rules',
      () => '/rules',
      (p) =>
        p
          .getByRole('link', { name: /^Acme Bank/ })
          .first()
          .waitFor(),
    ],
    ['new rule', () => '/rules/new', (p) => p.getByRole('heading', { level: 1 }).waitFor()],
    ['a rule', () => `/rules/${ids.rule}`, chartDrawn],
    ['incidents', () => '/incidents', (p) => p.getByRole('heading', { name: 'Incidents', level: 1 }).waitFor()],
    [
      'an incident',
      () => `/incidents/${ids.match}`,
      async (p) => Promise.all([p.getByRole('article').first().waitFor(), chartDrawn(p)]),
    ],
    ...['security', 'recipients', 'senders', 'templates', 'webhooks', 'siem', 'defaults', 'usage', 'api-keys'].map(
      (section): [string, () => string, (page: Page) => Promise<unknown>] => [
        `settings: ${section}`,
        () => `/settings/${section}`,
        (p) => p.getByRole('navigation', { name: 'Settings' }).waitFor(),
      ],
    ),
  ];

  it('the sign-in page', async () => {
    await page.goto(`${dashboard.baseUrl}/sign-in`);
    await page.getByLabel('Email').waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await signInAsDemo(page, dashboard);
    await page.waitForURL((url) => url.pathname !== '/sign-in');
  });

  for (const [name, path, ready] of pages) {
    it(name, async () => {
      await page.emulateMedia({ colorScheme: 'light' });
      await page.goto(`${dashboard.baseUrl}${path()}`);
      await ready(page);
      expect(await seriousViolations(page), `${name} (light)`).toEqual([]);
      // The stylesheet's dark colours apply as soon as the scheme changes.
      await page.emulateMedia({ colorScheme: 'dark' });
      expect(await seriousViolations(page), `${name} (dark)`).toEqual([]);
    });
  }

  it('saw no console error or failed request on the way', () => {
    expect(browser.problems).toEqual([]);
  });
});

async function searchSomething(page: Page) {
  await page.getByLabel('Query').fill('acme-bank.com');
  await page.getByLabel('Query').press('Enter');
  await page.getByRole('heading', { name: /matches? in/ }).waitFor();
}

/** The lazily loaded chart of a rule's matches, drawn: axe checks it too. */
const chartDrawn = (page: Page) => page.locator('figure[aria-label="Matches over time"] svg').first().waitFor();

/** A search of the demo's leaked credentials over the last week: the presenter's hits drawn. */
function sourceSearchPath() {
  const now = Date.now();
  return `/search/sources?${new URLSearchParams({
    service: '3',
    args: JSON.stringify({ domain_url: 'acme-bank.com', filter_id: 4 }),
    from: new Date(now - 7 * 24 * 3_600_000).toISOString(),
    to: new Date(now).toISOString(),
  })}`;
}
