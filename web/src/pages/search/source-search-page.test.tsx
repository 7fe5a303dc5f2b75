import { screen, waitFor, within } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sourceCatalog } from '../../../../src/modules/sources/index.ts';
import { channel, loadCorpus, message } from '../../../../test/support/corpus.ts';
import { NO_RATE_LIMITS } from '../../../../test/support/delivery-api.ts';
import { rulePaths, rulesUser, type RulesApi } from '../../../../test/support/rules-api.ts';
import type { TestApp } from '../../../../test/support/test-app.ts';
import { downloadedBy } from '../../test/downloads.ts';
import { renderDashboard, startTestServer } from '../../test/test-server.tsx';

const EMAIL = 'uma@adhoc.test';
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** More than one page of the preview's largest size, so the export reads page by page. */
const MESSAGES = 105;
const FORMULA_TEXT = '=HYPERLINK("http://evil.test") adhoc-bank.com';

type Hit = Record<string, unknown>;

describe('the source search page: any source searched by its args over a window', () => {
  let t: TestApp;
  let uma: RulesApi;
  const ids = new Map<string, number>();

  beforeAll(async () => {
    t = await startTestServer({ env: NO_RATE_LIMITS });
    uma = await rulesUser(t, 'Adhoc', EMAIL);
    const now = Date.now();
    for (const source of sourceCatalog) {
      ids.set(source.name, source.id);
      if (['filtered_leak', 'certificate', 'ransomware'].includes(source.name))
        await source.demo?.(t.container.sourceContext, now);
    }
    await loadCorpus(t, [
      channel('adhoc_leaks', [
        message(1, FORMULA_TEXT, { date: now - 2 * HOUR }),
        ...Array.from({ length: MESSAGES - 1 }, (_, index) =>
          message(index + 2, `adhoc-bank.com combo list ${index}`, { date: now - 3 * HOUR - index * 60_000 }),
        ),
        message(500, 'adhoc-bank.com from last month', { date: now - 40 * DAY }),
      ]),
    ]);
  }, 120_000);
  afterAll(() => t?.close());

  const lastWeek = () => ({ from: new Date(Date.now() - 7 * DAY).toISOString(), to: new Date().toISOString() });
  const address = (name: string, args: Record<string, unknown>, window = lastWeek()) =>
    `/search/sources?${new URLSearchParams({ service: String(ids.get(name)), args: JSON.stringify(args), ...window })}`;
  const articles = () => screen.getAllByRole('article');
  const fact = (hit: HTMLElement, label: string) =>
    within(hit).getByText(label, { selector: 'dt' }).nextElementSibling!.textContent!;

  /** Every hit of a search as the API gives it, for what the page and its exports must show. */
  async function hitsOf(body: Record<string, unknown>): Promise<Hit[]> {
    const hits: Hit[] = [];
    for (let page = 1; ; page++) {
      const response = await t.request({
        method: 'POST',
        url: '/service/alert_system_rule_preview/',
        token: uma.token,
        body: { ...body, page, page_size: 100 },
      });
      expect(response.statusCode, response.body).toBe(200);
      const { results, count } = response.json() as { results: Hit[]; count: number };
      hits.push(...results);
      if (hits.length >= count) return hits;
    }
  }

  /** The file the page hands to saveFile when an export button is clicked. */
  const exported = (format: 'CSV' | 'JSON') => downloadedBy(format);

  it('searches the messenger from the form: the presenter marks the terms, the address holds the search, pages turn', async () => {
    const { history } = await renderDashboard(t, '/search/sources', { email: EMAIL });
    const user = userEvent.setup();
    await user.selectOptions(await screen.findByLabelText('Source'), String(ids.get('messenger')));
    await user.type(screen.getByLabelText(/^Query/), 'adhoc-bank.com');
    await user.click(screen.getByRole('button', { name: 'Search' }));

    await screen.findByRole('heading', { name: `${MESSAGES} hits in Messenger channels` }, { timeout: 10_000 });
    expect(articles()).toHaveLength(20);
    expect(articles()[0]!.querySelector('mark')?.textContent?.toLowerCase()).toBe('adhoc-bank.com');
    // A preview's hit is not stored: no conversation to open around it.
    expect(screen.queryByRole('button', { name: /^Open in context/ })).toBeNull();
    const search = new URLSearchParams(history.location.search);
    expect(JSON.parse(search.get('args')!)).toEqual({ query: 'adhoc-bank.com' });
    expect(JSON.parse(search.get('service')!)).toBe(ids.get('messenger'));

    const pager = screen.getByRole('navigation', { name: 'Hit pages' });
    expect(pager.textContent).toContain('Page 1 of 6');
    const firstOfPageOne = articles()[0]!.textContent;
    await user.click(within(pager).getByRole('link', { name: 'Next' }));
    await waitFor(() =>
      expect(screen.getByRole('navigation', { name: 'Hit pages' }).textContent).toContain('Page 2 of 6'),
    );
    await waitFor(() => expect(articles()[0]!.textContent).not.toBe(firstOfPageOne));
    expect(new URLSearchParams(history.location.search).get('page')).toBe('2');

    expect(screen.getByRole('link', { name: 'Create a rule from this search' }).getAttribute('href')).toMatch(
      /^\/rules\/new\?service=1&/,
    );
  });

  it('shows a leaked credential masked, with no Reveal button', async () => {
    const args = { domain_url: 'acme-bank.com', filter_id: 4 };
    const hits = await hitsOf({ service: ids.get('filtered_leak'), args, ...lastWeek() });
    expect(hits.length).toBeGreaterThan(0);
    await renderDashboard(t, address('filtered_leak', args), { email: EMAIL });
    await waitFor(() => expect(articles().length).toBe(Math.min(hits.length, 20)), { timeout: 10_000 });
    expect(fact(articles()[0]!, 'Password')).toContain('*');
    expect(screen.queryByRole('button', { name: /Reveal/ })).toBeNull();
  });

  it("draws a certificate's names with the domain marked, and a ransomware post's group", async () => {
    const { view } = await renderDashboard(t, address('certificate', { domain: 'acme-bank.com' }), { email: EMAIL });
    const [certificate] = await screen.findAllByRole('article', undefined, { timeout: 10_000 });
    const names = within(certificate!).getByRole('list', { name: 'Names in the certificate' });
    expect(names.querySelector('mark')).not.toBeNull();
    view.unmount();

    await renderDashboard(t, address('ransomware', { query: 'Acme Bank' }), { email: EMAIL });
    const [post] = await screen.findAllByRole('article', undefined, { timeout: 10_000 });
    expect(fact(post!, 'Group')).not.toBe('');
  });

  it("shows the server's errors beside the inputs they are about", async () => {
    const { view } = await renderDashboard(t, address('messenger', { query: 'adhoc', context_chars: 'many' }), {
      email: EMAIL,
    });
    const context = await screen.findByLabelText(/^Context chars/, undefined, { timeout: 10_000 });
    await waitFor(() => expect(context.getAttribute('aria-invalid')).toBe('true'), { timeout: 10_000 });
    const contextError = document.getElementById(context.getAttribute('aria-describedby')!.split(' ').at(-1)!)!;
    expect(contextError.className).toBe('error');
    expect(contextError.textContent).toMatch(/integer/);
    view.unmount();

    const tooLong = { from: new Date(Date.now() - 40 * DAY).toISOString(), to: new Date().toISOString() };
    await renderDashboard(t, address('messenger', { query: 'adhoc-bank.com' }, tooLong), { email: EMAIL });
    const to = await screen.findByLabelText(/^To/);
    await waitFor(() => expect(to.getAttribute('aria-invalid')).toBe('true'), { timeout: 10_000 });
    expect(document.getElementById(to.getAttribute('aria-describedby')!.split(' ').at(-1)!)!.textContent).toMatch(
      /31 days/,
    );
  });

  it("shows the window in the dashboard's chosen time zone", async () => {
    localStorage.setItem('dragnet.timeZone', 'utc');
    try {
      const window = lastWeek();
      await renderDashboard(t, address('messenger', { query: 'adhoc-bank.com' }, window), { email: EMAIL });
      const from = (await screen.findByLabelText(/^From \(UTC\)/, undefined, { timeout: 10_000 })) as HTMLInputElement;
      expect(from.value).toBe(window.from.slice(0, 16));
      expect((screen.getByLabelText(/^To \(UTC\)/) as HTMLInputElement).value).toBe(window.to.slice(0, 16));
    } finally {
      localStorage.removeItem('dragnet.timeZone');
    }
  });

  it('exports every hit as CSV (formulas neutralised) and JSON, read page by page; nothing is stored', async () => {
    const window = lastWeek();
    const args = { query: 'adhoc-bank.com' };
    const hits = await hitsOf({ service: ids.get('messenger'), args, ...window });
    expect(hits).toHaveLength(MESSAGES);
    await renderDashboard(t, address('messenger', args, window), { email: EMAIL });
    await screen.findByRole('heading', { name: `${MESSAGES} hits in Messenger channels` }, { timeout: 10_000 });

    const csv = await exported('CSV');
    expect(csv.name).toMatch(/^dragnet-messenger-.*\.csv$/);
    const [header, ...rows] = parse(csv.text, { bom: true }) as string[][];
    expect(rows).toHaveLength(MESSAGES);
    const cell = (value: unknown) =>
      value === null || value === undefined ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value);
    const formulaRow = rows.findIndex((row) => row.some((entry) => entry.includes('HYPERLINK')));
    expect(rows[formulaRow]![header!.indexOf('text')]).toBe(`'${FORMULA_TEXT}`);
    // Past the apostrophes the neutraliser adds, each cell is the hit's field.
    const unneutralised = (entry: string) => (entry.startsWith("'=") ? entry.slice(1) : entry);
    expect(rows.map((row) => row.map(unneutralised))).toEqual(
      hits.map((hit) => header!.map((column) => cell(hit[column]))),
    );
    expect(new Set(header)).toEqual(new Set(hits.flatMap((hit) => Object.keys(hit))));

    const json = await exported('JSON');
    expect(json.name).toMatch(/^dragnet-messenger-.*\.json$/);
    const body = JSON.parse(json.text) as { results: Hit[]; count: number; args: unknown };
    expect(body.results).toEqual(hits);
    expect(body).toMatchObject({ count: MESSAGES, args });

    expect((await uma.getJson<{ count: number }>(rulePaths.list)).count).toBe(0);
    expect((await uma.getJson<{ count: number }>('/service/alert_system_incident_list/')).count).toBe(0);
  });

  it('exports leaked credentials with their passwords masked', async () => {
    const args = { domain_url: 'acme-bank.com', filter_id: 4 };
    await renderDashboard(t, address('filtered_leak', args), { email: EMAIL });
    await screen.findAllByRole('article', undefined, { timeout: 10_000 });
    const body = JSON.parse((await exported('JSON')).text) as { results: Hit[] };
    expect(body.results.length).toBeGreaterThan(0);
    for (const hit of body.results) {
      expect(String(hit.password)).toContain('*');
      expect(Object.keys(hit)).not.toContain('password_sealed');
    }
  });
});
