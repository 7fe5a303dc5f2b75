import { screen, waitFor, within } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { channel, loadCorpus, message } from '../../../../test/support/corpus.ts';
import type { TestApp } from '../../../../test/support/test-app.ts';
import { NO_RATE_LIMITS } from '../../../../test/support/delivery-api.ts';
import { renderDashboard, startTestServer } from '../../test/test-server.tsx';

/** 25 matches of "fresh logs" in two channels (more than one page of 20), and noise. */
const corpus = [
  channel(
    'logs_market',
    Array.from({ length: 15 }, (_, i) =>
      message(
        i + 1,
        `FRESH LOGS batch ${i + 1} for acme-bank.com`,
        i === 0 ? { links: ['https://acme-bank.example/login', 'javascript:alert(1)'] } : {},
      ),
    ),
    { category: 'Markets' },
  ),
  channel(
    'combo_cloud',
    [
      ...Array.from({ length: 10 }, (_, i) => message(100 + i, `fresh logs from the cloud #${i}`)),
      message(200, 'nothing of interest'),
    ],
    {
      category: 'Clouds',
    },
  ),
];

describe('the search page', () => {
  let t: TestApp;
  beforeAll(async () => {
    // The page's own requests are paced below the 25-per-second cap (api/pacing.ts), but the
    // test's calls beside them are not: the cap is the client test's subject, not this one's.
    t = await startTestServer({ env: NO_RATE_LIMITS });
    await t.createUser({ org: 'Acme', email: 'ana@acme.test' });
    await loadCorpus(t, corpus);
  });
  afterAll(() => t.close());

  const search = async (query: string) => {
    const rendered = await renderDashboard(t, '/search', { email: 'ana@acme.test' });
    const user = userEvent.setup();
    await user.type(await screen.findByLabelText('Query'), query);
    await user.click(screen.getByRole('button', { name: 'Search' }));
    return { ...rendered, user };
  };

  it('runs a search and shows its count, results with the terms marked, and links', async () => {
    const { history } = await search('"fresh logs" acme-bank.com');

    expect((await screen.findByRole('heading', { name: /matches in/ })).textContent).toBe('15 matches in 1 channel');
    const results = screen.getAllByRole('article');
    expect(results).toHaveLength(15);
    const first = results[0]!;
    expect([...first.querySelectorAll('mark')].map((mark) => mark.textContent)).toEqual([
      'FRESH LOGS',
      'acme-bank.com',
    ]);
    expect(within(first).getByText('@logs_market')).toBeTruthy();
    // Only web links are clickable; a javascript: URL posted in a channel stays text.
    const links = within(results.at(-1)!).getByRole('list', { name: 'Links in the message' });
    expect(
      within(links)
        .getAllByRole('link')
        .map((link) => link.getAttribute('href')),
    ).toEqual(['https://acme-bank.example/login']);
    expect(within(links).getByText('javascript:alert(1)').tagName).toBe('LI');

    // The address names the recorded search, so a reload re-reads it rather than searching again.
    const address = new URLSearchParams(history.location.search);
    expect(address.get('q')).toBe('"fresh logs" acme-bank.com');
    expect(address.get('history')).toMatch(/^\d+$/);
  });

  it('loads more results from the recorded search until all are shown', async () => {
    const { user } = await search('"fresh logs"');
    expect((await screen.findByRole('heading', { name: /matches in/ })).textContent).toBe('25 matches in 2 channels');
    expect(screen.getAllByRole('article')).toHaveLength(20);
    expect(screen.getByText('20 of 25 shown')).toBeTruthy();

    await user.click(screen.getByRole('button', { name: 'Load more' }));
    await waitFor(() => expect(screen.getAllByRole('article')).toHaveLength(25));
    expect(screen.queryByRole('button', { name: 'Load more' })).toBeNull();
    // Keyboard users carry on at the first result they had not seen.
    expect(document.activeElement).toBe(
      screen.getAllByRole('listitem').filter((item) => item.classList.contains('result'))[20],
    );
  });

  it('shows a query syntax error as the server words it, with the character it points at, counted from 1 once', async () => {
    const answer = (
      await t.request({
        method: 'POST',
        url: '/service/messenger-search-create/',
        token: (await t.login('ana@acme.test')).access,
        body: { query: 'fresh AND (logs' },
      })
    ).json();
    await search('fresh AND (logs');
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain(answer.message);
    const field = screen.getByLabelText('Query');
    expect(field.getAttribute('aria-invalid')).toBe('true');
    const beside = document.getElementById(field.getAttribute('aria-describedby')!.split(' ').at(-1)!)!.textContent;
    expect(beside).toContain(`at character ${answer.position + 1}`);
    // Where it is, said once and for people: the nth character, not also a 0-based position.
    expect(document.body.textContent).not.toMatch(/position/);
    expect(document.body.textContent!.match(/at character/g)).toHaveLength(2); // the notice and the field
  });

  it('restricts a search to the channels ticked in the filter, found by category and name', async () => {
    const rendered = await renderDashboard(t, '/search', { email: 'ana@acme.test' });
    const user = userEvent.setup();
    await user.click(await screen.findByText('Filters and options'));
    await user.selectOptions(
      screen.getByLabelText('Category'),
      await screen.findByRole('option', { name: 'Clouds (1)' }),
    );
    await user.type(screen.getByLabelText('Find a channel'), 'combo');
    await user.click(await screen.findByRole('checkbox', { name: 'combo_cloud (@combo_cloud)' }));
    expect(screen.getByRole('button', { name: 'Remove combo_cloud (@combo_cloud)' })).toBeTruthy();
    await user.type(screen.getByLabelText('Query'), '"fresh logs"');
    await user.click(screen.getByRole('button', { name: 'Search' }));

    expect((await screen.findByRole('heading', { name: /matches in/ })).textContent).toBe('10 matches in 1 channel');
    expect(JSON.parse(new URLSearchParams(rendered.history.location.search).get('channels')!)).toEqual([
      expect.any(Number),
    ]);
  });

  it('lists past searches, newest first, and re-opens one as it ran', async () => {
    const { access } = await t.login('ana@acme.test');
    for (const query of ['acme-bank.com', 'cloud']) {
      await t.request({
        method: 'POST',
        url: '/service/messenger-search-create/',
        token: access,
        body: { query, unique_only: true, context_chars: 50 },
      });
    }
    const { history } = await renderDashboard(t, '/search/history', { email: 'ana@acme.test' });
    const open = await screen.findByRole('link', { name: 'Open the search cloud' });
    const rows = screen.getAllByRole('row').slice(1);
    expect(rows.map((row) => row.querySelector('code')!.textContent).slice(0, 2)).toEqual(['cloud', 'acme-bank.com']);
    expect(within(rows[0]!).getByText('unique only · context 50')).toBeTruthy();

    await userEvent.setup().click(open);
    expect((await screen.findByRole('heading', { name: /matches in/ })).textContent).toBe('10 matches in 1 channel');
    expect((screen.getByLabelText('Query') as HTMLTextAreaElement).value).toBe('cloud');
    expect((screen.getByRole('checkbox', { name: /Unique messages only/ }) as HTMLInputElement).checked).toBe(true);
    expect((screen.getByLabelText('Context characters') as HTMLInputElement).value).toBe('50');
    expect(history.location.pathname).toBe('/search');
  });

  it("deletes one's own past search from the history page, and offers no delete for a colleague's", async () => {
    await t.createUser({ org: 'Acme', email: 'ben@acme.test' });
    const post = async (email: string, query: string) => {
      const { access } = await t.login(email);
      const response = await t.request({
        method: 'POST',
        url: '/service/messenger-search-create/',
        token: access,
        body: { query },
      });
      return (response.json() as { search_history_id: number }).search_history_id;
    };
    const own = await post('ana@acme.test', 'deletable ana');
    await post('ben@acme.test', 'kept ben');
    await renderDashboard(t, '/search/history', { email: 'ana@acme.test' });
    const remove = await screen.findByRole('button', { name: 'Delete the search deletable ana' });
    expect(screen.getByRole('link', { name: 'Open the search kept ben' })).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Delete the search kept ben' })).toBeNull();

    await userEvent.setup().click(remove);
    await waitFor(() => expect(screen.queryByRole('link', { name: 'Open the search deletable ana' })).toBeNull());
    expect(screen.getByRole('link', { name: 'Open the search kept ben' })).toBeTruthy();
    const { access } = await t.login('ana@acme.test');
    expect(
      (await t.request({ method: 'GET', url: `/service/messenger-search-history-results/${own}/`, token: access }))
        .statusCode,
    ).toBe(404);
  });

  it('offers a rule made from the search, carrying its follow-up token and options', async () => {
    await search('acme-bank.com');
    const link = await screen.findByRole('link', { name: 'Create a rule from this search' });
    const url = new URL(link.getAttribute('href')!, 'http://x');
    expect(url.pathname).toBe('/rules/new');
    expect(JSON.parse(url.searchParams.get('args')!)).toEqual({ query: 'acme-bank.com' });
    expect(JSON.parse(url.searchParams.get('service')!)).toBe(1);
    expect(url.searchParams.get('follow_up_token')).toMatch(/\S{20,}/);
  });

  it('exports the search as a file named by the server', async () => {
    await search('"fresh logs" acme-bank.com');
    await screen.findByRole('heading', { name: /matches in/ });
    const saved = vi.spyOn(URL, 'createObjectURL');
    const clicked = new Promise<HTMLAnchorElement>((resolve) => {
      const onClick = (event: Event) => {
        if (!(event.target instanceof HTMLAnchorElement)) return;
        document.removeEventListener('click', onClick, true);
        resolve(event.target);
      };
      document.addEventListener('click', onClick, true);
    });
    await userEvent.setup().click(screen.getByRole('button', { name: 'CSV' }));
    const anchor = await clicked;
    expect(anchor.download).toMatch(/^dragnet-search-\d+\.csv$/);
    const csv = await (saved.mock.calls[0]![0] as Blob).text();
    expect(csv.split('\n').filter((line) => line.includes('FRESH LOGS'))).toHaveLength(15);
    saved.mockRestore();
  });
});
