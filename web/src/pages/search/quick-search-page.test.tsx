import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { screen, waitFor, within } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestInto, rulesUser } from '../../../../test/support/rules-api.ts';
import { serviceScope } from '../../../../src/modules/usage/index.ts';
import type { TestApp } from '../../../../test/support/test-app.ts';
import { createApi } from '../../api/client.ts';
import { createSessionStore } from '../../api/session.ts';
import { fetchThrough, renderDashboard, startTestServer } from '../../test/test-server.tsx';

const EMAIL = 'quinn@quickbank.test';

const combolist = [
  'https://vpn.quickbank-demo.com/login:staff@quickbank-demo.com:Staff-Pass-1',
  'https://shop.quickbank-demo.com/account:buyer@mail-demo.org:Buyer-Pass-2',
  'https://social-demo.net/login:staff@quickbank-demo.com:Staff-Pass-1',
  'other@elsewhere-demo.com:x12345',
].join('\n');

describe('the quick searches page', () => {
  let t: TestApp;
  let dir: string;

  beforeAll(async () => {
    t = await startTestServer({ env: { DRAGNET_RATE_LIMITS: 'on' } });
    await rulesUser(t, 'Quickbank', EMAIL);
    dir = mkdtempSync(path.join(tmpdir(), 'dragnet-quick-page-'));
    writeFileSync(path.join(dir, 'quick-page-combo.txt'), combolist);
    await ingestInto(t, 'filtered_leak', [path.join(dir, 'quick-page-combo.txt')]);
  });
  afterAll(async () => {
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const section = (name: string) => screen.getByRole('region', { name });
  const quota = (slug: string) => screen.queryByTestId(`quota-${slug}`)?.textContent ?? '';

  it('searches a domain: counts and the newest sightings with masked passwords; the quota left drops by one', async () => {
    await renderDashboard(t, '/search/quick', { email: EMAIL });
    await waitFor(() => expect(quota('domain_quick_search')).toMatch(/^100 of 100 searches left today, resets in /));
    const user = userEvent.setup();
    const form = await screen.findByRole('form', { name: 'Domain' });
    await user.type(within(form).getByLabelText('Domain'), 'https://vpn.quickbank-demo.com/login');
    await user.click(within(form).getByRole('button', { name: 'Search' }));
    const sightings = await screen.findByRole('table', { name: 'Newest sightings of quickbank-demo.com' });
    const rows = within(sightings).getAllByRole('row').slice(1);
    expect(rows).toHaveLength(3);
    expect(sightings.textContent).toContain('staff@quickbank-demo.com');
    expect(sightings.textContent).toContain('S****1');
    expect(document.body.textContent).not.toContain('Staff-Pass-1');
    const counts = within(section('What is known of quickbank-demo.com')).getByText('Sightings').parentElement!;
    expect(counts.textContent).toBe('Sightings3');
    await waitFor(() => expect(quota('domain_quick_search')).toMatch(/^99 of 100 searches left today/));
    expect(quota('email_quick_search')).toMatch(/^100 of 100/);
  });

  it('shows the error the API gives beside the field it names', async () => {
    await renderDashboard(t, '/search/quick', { email: EMAIL });
    const user = userEvent.setup();
    const form = await screen.findByRole('form', { name: 'Accounts database' });
    await user.type(within(form).getByLabelText('Part of the URL'), '/login');
    await user.click(within(form).getByRole('button', { name: 'Search' }));
    const url = within(form).getByLabelText('Part of the URL');
    await waitFor(() => expect(url.getAttribute('aria-invalid')).toBe('true'));
    const described = url
      .getAttribute('aria-describedby')!
      .split(' ')
      .map((id) => document.getElementById(id)!);
    expect(described.map((element) => element.textContent).join(' ')).toMatch(/combine url with login/);
  });

  it('searches an email address: its leaks, the sites it was used on and its sightings', async () => {
    await renderDashboard(t, '/search/quick', { email: EMAIL });
    const user = userEvent.setup();
    const form = await screen.findByRole('form', { name: 'Email address' });
    await user.type(within(form).getByLabelText('Email address'), 'STAFF@quickbank-demo.com');
    await user.click(within(form).getByRole('button', { name: 'Search' }));
    const leaks = await screen.findByRole('table', { name: /^Leaks of / });
    expect(within(leaks).getAllByRole('row').slice(1)[0]!.textContent).toMatch(/quick-page-combo.*Combolists2/);
    const sites = within(screen.getByRole('list', { name: /^Sites of / }))
      .getAllByRole('listitem')
      .map((item) => item.textContent);
    expect(sites.sort()).toEqual(['social-demo.net (1)', 'vpn.quickbank-demo.com (1)']);
  });

  it('finds accounts by a password whose SHA-1 prefix the browser computes, and sends only the prefix', async () => {
    const sent: string[] = [];
    const through = fetchThrough(t);
    const api = createApi({
      session: createSessionStore(localStorage),
      baseUrl: 'http://dragnet.test',
      fetch: (input, init) => {
        sent.push(new Request(input, init).url);
        return through(input, init);
      },
    });
    await renderDashboard(t, '/search/quick', { email: EMAIL, api });
    const user = userEvent.setup();
    const form = await screen.findByRole('form', { name: 'Accounts database' });
    await user.type(within(form).getByLabelText('Domain'), 'quickbank-demo.com');
    await user.type(within(form).getByLabelText('Or a password'), 'Staff-Pass-1');
    await user.click(within(form).getByRole('button', { name: 'Search' }));
    const found = await screen.findByRole('table', { name: 'Accounts found' });
    const prefix = createHash('sha1').update('Staff-Pass-1').digest('hex').slice(0, 5).toUpperCase();
    expect((within(form).getByLabelText('Password SHA-1 prefix') as HTMLInputElement).value).toBe(prefix);
    expect(
      within(found)
        .getAllByRole('row')
        .slice(1)
        .map((row) => within(row).getAllByRole('cell')[0]!.textContent),
    ).toEqual(['staff@quickbank-demo.com', 'staff@quickbank-demo.com']);
    expect(screen.getByText('2 distinct credentials')).toBeTruthy();
    const searches = sent.filter((url) => url.includes('/accounts_database_search/'));
    expect(searches).toHaveLength(1);
    expect(new URL(searches[0]!).searchParams.get('password_sha1_prefix')).toBe(prefix);
    expect(sent.join(' ')).not.toContain('Staff-Pass');
  });

  it('a search over its daily quota says when the quota resets', async () => {
    const ned = await rulesUser(t, 'Tightbank', 'ned@tight.test');
    await t.container.limits.setOverride(ned.orgId, serviceScope('email_quick_search'), 'day', 1);
    await renderDashboard(t, '/search/quick', { email: 'ned@tight.test' });
    await waitFor(() => expect(quota('email_quick_search')).toMatch(/^1 of 1 searches left today/));
    const user = userEvent.setup();
    const form = await screen.findByRole('form', { name: 'Email address' });
    await user.type(within(form).getByLabelText('Email address'), 'staff@quickbank-demo.com');
    await user.click(within(form).getByRole('button', { name: 'Search' }));
    await waitFor(() => expect(quota('email_quick_search')).toMatch(/^0 of 1 searches left today/));
    await user.click(within(form).getByRole('button', { name: 'Search' }));
    const alert = await within(form).findByRole('alert');
    expect(alert.textContent).toMatch(/^The daily quota of this search is used up; it resets in \d+ (s|min|h)/);
  });
});
