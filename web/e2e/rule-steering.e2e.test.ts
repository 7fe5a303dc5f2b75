import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scaled } from '../../test/support/wait.ts';
// The browser runs on this machine, in this time zone.
import { datetimeLocalValue } from '../src/pages/rules/datetime-input.ts';
import { launchChromium, screenshot, type Browser } from './support/browser.ts';
import { signInAsDemo, startDashboardServer, type DashboardServer } from './support/dashboard-server.ts';

const RULE = 'Acme Bank steered';
const RECIPIENT = 'steer@acme.test';
const DAY_MS = 24 * 3_600_000;

/**
 * Steering a rule in Debian's Chromium against `npm start` on the demo data: a preview of the
 * last month that stores nothing, a pause that the rules list shows, and a resume.
 */
describe('the dashboard in a browser: preview and pause a rule', () => {
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

  it('makes a rule to steer: a default recipient, then the rule', async () => {
    await page.goto(`${dashboard.baseUrl}/settings/recipients`);
    await page.waitForURL(/\/sign-in\?redirect=/);
    await signInAsDemo(page, dashboard);
    await page.getByLabel('Email address').fill(RECIPIENT);
    await page.getByLabel('Make it the default').check();
    await page.getByRole('button', { name: 'Add recipient' }).click();
    await page.getByRole('cell', { name: `${RECIPIENT} default` }).waitFor();

    await page.goto(`${dashboard.baseUrl}/rules/new`);
    await page.getByLabel('Service').selectOption({ label: 'Messenger channels' });
    await page.getByLabel(/^Query/).fill('"fresh logs" AND acme-bank.com');
    await page.getByLabel('Name').fill(RULE);
    await page.getByRole('button', { name: 'Create the rule' }).click();
    await page.getByRole('heading', { name: RULE }).waitFor({ timeout: scaled(30_000) });
  });

  it("previews the last month: the hits show, and the rule's run history does not change", async () => {
    const runs = page.getByRole('region', { name: 'Run history' });
    // The rule's first run found the demo's messages: its match is listed once the history is read.
    await runs
      .getByRole('link', { name: /^Open the match of / })
      .first()
      .waitFor();
    const before = await runs.getByRole('link', { name: /^Open the match of / }).count();
    const preview = page.getByRole('region', { name: 'Preview' });
    await preview.getByLabel('From').fill(datetimeLocalValue(Date.now() - 30 * DAY_MS));
    await preview.getByRole('button', { name: 'Preview' }).click();
    await preview.getByRole('list', { name: 'Preview hits' }).locator('li').first().waitFor();
    expect(await preview.getByText(/^\d+ hits? between/).textContent()).toMatch(/^[1-9]\d* hits? between/);
    await screenshot(page, 'rule-preview');
    await page.reload();
    await page.getByRole('heading', { name: RULE }).waitFor();
    await expect.poll(() => runs.getByRole('link', { name: /^Open the match of / }).count()).toBe(before);
  });

  it('pauses the rule: the page and the rules list say so; resumed, it is active again', async () => {
    const schedule = page.getByRole('region', { name: 'Schedule' });
    await schedule.getByRole('button', { name: `Pause ${RULE}` }).click();
    await schedule.getByText(/paused since/).waitFor();
    await screenshot(page, 'rule-paused');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Rules' }).click();
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: RULE, exact: true }) });
    await row.getByText('paused', { exact: true }).waitFor();
    await row.getByRole('link', { name: RULE, exact: true }).click();
    await schedule.getByRole('button', { name: `Resume ${RULE}` }).click();
    await schedule.getByText(/^Active/).waitFor();
  });

  it('raised no error in the browser (console, uncaught, content security policy)', () => {
    expect(browser.problems).toEqual([]);
  });
});
