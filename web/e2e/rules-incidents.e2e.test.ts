import { createServer, type AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSmtpTestServer, type SmtpTestServer } from '../../test/support/smtp-test-server.ts';
import { scaled } from '../../test/support/wait.ts';
import { launchChromium, PHONE, screenshot, type Browser } from './support/browser.ts';
import { signInAsDemo, startDashboardServer, type DashboardServer } from './support/dashboard-server.ts';

const QUERY = '"fresh logs" AND acme-bank.com';
const RULE = 'Acme Bank fresh logs';
const RECIPIENT = 'soc@acme.test';

/** A port free now, so the server's default notification links (http://HOST:PORT) name it. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * An analyst's monitoring, in Debian's Chromium against `npm start` on the demo data and a real
 * SMTP server: delivery settings, a rule made from a search, its email, whose link opens the
 * incident page after signing in, an exclusion that changes the counts, and the incident worked:
 * acknowledged, noted, and resolved from the inbox with a bulk change. Screenshots of each
 * page go to test-results/screenshots.
 */
describe('the dashboard in a browser: settings, a rule from a search, its email and incident', () => {
  let dashboard: DashboardServer;
  let browser: Browser;
  let smtp: SmtpTestServer;
  let page: Page;
  let link: string;

  beforeAll(async () => {
    // Plaintext without a login: what an SSL sender with no authentication speaks (spec 2.6).
    smtp = await startSmtpTestServer({ starttls: 'unsupported', auth: null });
    // The worker looks for notifications to send every 200 ms instead of 2 s.
    [dashboard, browser] = await Promise.all([
      startDashboardServer({ PORT: String(await freePort()), DRAGNET_SCHEDULER_POLL_MS: '200' }),
      launchChromium(),
    ]);
    page = await browser.newPage();
  });
  afterAll(async () => {
    await browser?.close();
    await dashboard?.stop();
    await smtp?.close();
  });

  const signIn = async () => {
    await page.waitForURL(/\/sign-in\?redirect=/);
    await signInAsDemo(page, dashboard);
  };
  const settings = async (section: string) => {
    await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: section }).click();
    await page.getByRole('heading', { name: section, level: 1 }).waitFor();
  };

  it('sets up delivery: a sender to the SMTP server and a recipient, both defaults', async () => {
    await page.goto(`${dashboard.baseUrl}/settings/senders`);
    await signIn();
    await page.getByRole('heading', { name: 'Senders' }).waitFor();
    await page.getByLabel('From address').fill('alerts@acme.test');
    await page.getByLabel('SMTP server').fill('127.0.0.1');
    await page.getByLabel('Port').fill(String(smtp.port));
    await page.getByLabel('Encryption').selectOption('SSL');
    await page.getByLabel('The server needs a login').uncheck();
    await page.getByLabel('Make it the default').check();
    await page.getByRole('button', { name: 'Add sender' }).click();
    await page.getByRole('cell', { name: 'alerts@acme.test default' }).waitFor();
    await screenshot(page, 'settings-senders');

    await settings('Recipients');
    await page.getByLabel('Email address').fill(RECIPIENT);
    await page.getByLabel('Make it the default').check();
    await page.getByRole('button', { name: 'Add recipient' }).click();
    await page.getByRole('cell', { name: `${RECIPIENT} default` }).waitFor();
    await screenshot(page, 'settings-recipients');
  });

  it('shows the other settings: the template with its preview, webhooks, defaults, usage', async () => {
    await settings('Email templates');
    await page.getByRole('button', { name: 'Edit Dragnet default' }).click();
    await expect
      .poll(() => page.getByTestId('preview-subject').textContent())
      .toContain('Acme Bank on messenger channels');
    // The preview draws the email's own styles (applied without breaking the page's CSP).
    const frame = page.frameLocator('iframe[title="Email body preview"]');
    await expect
      .poll(() =>
        frame
          .locator('a')
          .first()
          .evaluate((a) => getComputedStyle(a).backgroundColor),
      )
      .not.toBe('rgba(0, 0, 0, 0)');
    await screenshot(page, 'settings-templates');
    for (const section of ['Webhooks', 'Defaults', 'Usage']) {
      await settings(section);
      await screenshot(page, `settings-${section.toLowerCase()}`);
    }
  });

  it('makes a rule from a search: the form comes filled in, and the rule runs at once', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Search', exact: true }).click();
    await page.getByLabel('Query').fill(QUERY);
    await page.getByLabel('Query').press('Enter');
    await page.getByRole('heading', { name: /matches? in/ }).waitFor();
    await page.getByRole('link', { name: 'Create a rule from this search' }).click();

    await page.getByRole('heading', { name: 'New monitoring rule' }).waitFor();
    expect(await page.getByLabel(/^Query/).inputValue()).toBe(QUERY);
    expect(await page.getByLabel(RECIPIENT).isChecked()).toBe(true);
    expect(await page.getByLabel('Sender').locator('option:checked').textContent()).toBe('alerts@acme.test');
    await page.getByLabel('Name').fill(RULE);
    await screenshot(page, 'rule-new');
    await page.getByRole('button', { name: 'Create the rule' }).click();

    await page.getByRole('heading', { name: RULE }).waitFor();
    await page.getByRole('link', { name: /^Open the match of / }).waitFor();
    await page.getByRole('figure', { name: 'Matches over time' }).locator('svg').first().waitFor();
    await screenshot(page, 'rule');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Rules' }).click();
    await page.getByRole('link', { name: RULE, exact: true }).waitFor();
    await screenshot(page, 'rules');
  });

  it("emails the recipients through the sender; the email's link is the incident page of this server", async () => {
    const [mail] = await smtp.waitForMessages(1, scaled(30_000));
    expect(mail).toMatchObject({ from: 'alerts@acme.test', to: [RECIPIENT] });
    expect(mail!.parsed.subject).toContain(RULE);
    link = /href="([^"]*\/incidents\/\d+\?org=\d+)"/.exec(String(mail!.parsed.html))![1]!;
    expect(link).toMatch(new RegExp(`^${dashboard.baseUrl}/incidents/\\d+\\?org=\\d+$`));
  });

  it('the link asks a signed-out reader to sign in, then opens the incident', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/sign-in$/);
    await page.goto(link);
    await signIn();
    await page.getByRole('heading', { name: `Incident: ${RULE}` }).waitFor();
    // The organization, once acted for (here the reader's own), leaves the address.
    expect(page.url()).toBe(link.replace(/\?org=\d+$/, ''));
    await page.locator('li.result').first().waitFor();
    await screenshot(page, 'incident');
  });

  it('excluding a hit changes the counts', async () => {
    const count = (testId: string) => page.getByTestId(testId).textContent().then(Number);
    const before = { fresh: await count('count-new'), excluded: await count('count-excluded') };
    expect(before.fresh).toBeGreaterThan(0);
    await page.locator('li.result').first().getByRole('button', { name: 'False positive: exclude this hit' }).click();
    await expect.poll(() => count('count-new')).toBe(before.fresh - 1);
    expect(await count('count-excluded')).toBe(before.excluded + 1);
    await page.getByText(/^Excluded one hit/).waitFor();
    await screenshot(page, 'incident-excluded');

    // The rule counts it too.
    await page.getByRole('link', { name: RULE, exact: true }).first().click();
    await page.getByRole('heading', { name: RULE }).waitFor();
    await page
      .getByRole('region', { name: 'Exclusions' })
      .getByText(/^Excluded: one hit/)
      .waitFor();
  });

  it('works the incident on its page: acknowledge and a note, each in its history; the count of new ones follows', async () => {
    const mainNav = page.getByRole('navigation', { name: 'Main' });
    const newIncidents = () =>
      mainNav
        .getByTestId('new-incidents')
        .textContent({ timeout: 1000 })
        .then((text) => Number(/\d+/.exec(text ?? '')?.[0] ?? 0))
        .catch(() => 0);
    await page.goto(link);
    const work = page.getByRole('region', { name: 'Work this incident' });
    await work.getByText(/^Nothing yet/).waitFor();
    await expect.poll(newIncidents).toBeGreaterThan(0);
    const before = await newIncidents();

    await work.getByLabel('Status').selectOption('Acknowledged');
    await work.getByRole('listitem').filter({ hasText: 'Status: new → acknowledged' }).waitFor();
    await expect.poll(newIncidents).toBe(before - 1);
    await work.getByRole('textbox', { name: 'Note' }).fill('Checked with the bank: one hit was a test account');
    await work.getByRole('button', { name: 'Add note' }).click();
    await work.getByRole('listitem').filter({ hasText: 'one hit was a test account' }).waitFor();
    expect(await work.getByRole('listitem').first().textContent()).toContain(dashboard.demo.email);
    await screenshot(page, 'incident-worked');
  });

  it('resolves from the inbox: filtered by status, selected, one status for all of them', async () => {
    await page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: /^Incidents/ })
      .click();
    await page.getByRole('heading', { name: 'Incidents', level: 1 }).waitFor();
    await page.getByRole('checkbox', { name: 'Acknowledged' }).check();
    const table = page.getByRole('table', { name: 'Incidents' });
    await table.getByRole('row').filter({ hasText: RULE }).waitFor();
    expect(await table.getByRole('row').count()).toBe(2);
    await screenshot(page, 'incidents');
    await page.getByRole('checkbox', { name: 'Select every incident on this page' }).check();
    await page.getByLabel('Set status to').selectOption('Resolved');
    await page.getByRole('button', { name: 'Apply to selected' }).click();
    await page.getByText('1 incident set to resolved.').waitFor();
    await page.getByText(/^0 incidents$/).waitFor();

    await page.getByRole('checkbox', { name: 'Acknowledged' }).uncheck();
    await page.getByRole('checkbox', { name: 'Resolved' }).check();
    await table.getByRole('row').filter({ hasText: RULE }).getByText('Resolved').waitFor();
    await table.getByRole('row').filter({ hasText: RULE }).getByRole('link').click();
    await page.getByRole('heading', { name: `Incident: ${RULE}` }).waitFor();
    const history = page.getByRole('region', { name: 'Work this incident' }).getByRole('listitem');
    await history.filter({ hasText: 'Status: acknowledged → resolved' }).waitFor();
  });

  it('reads on a phone: the incident page fits the screen width', async () => {
    const phone = await browser.newPage(PHONE);
    await phone.goto(link);
    await phone.getByRole('heading', { name: `Incident: ${RULE}` }).waitFor();
    await phone.locator('li.result').first().waitFor();
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    await screenshot(phone, 'incident-phone');
    await phone.close();
  });

  it('raised no error in the browser (console, uncaught, content security policy, unexpected 4xx/5xx)', () => {
    expect(browser.problems).toEqual([]);
  });
});
