import { cleanup, screen, waitFor } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { TestApp } from '../../../test/support/test-app.ts';
import { renderDashboard, startTestServer } from '../test/test-server.tsx';

// A reader whose local time is not UTC (set before the formats are made).
vi.hoisted(() => {
  process.env.TZ = 'America/New_York';
});

describe('times in the dashboard', () => {
  let t: TestApp;
  let searchedAt: string;
  beforeAll(async () => {
    t = await startTestServer();
    await t.createUser({ org: 'Acme', email: 'ana@acme.test' });
    const { access } = await t.login('ana@acme.test');
    await t.request({
      method: 'POST',
      url: '/service/messenger-search-create/',
      token: access,
      body: { query: 'zone' },
    });
    const history = await t.request({ method: 'GET', url: '/service/messenger-search-history/', token: access });
    searchedAt = (history.json() as { items: { searched_at: string }[] }).items[0]!.searched_at;
  });
  afterAll(() => t.close());

  const shownTime = async () => (await screen.findByText((_, element) => element?.tagName === 'TIME')).textContent!;

  it('say their zone, local by default; UTC when chosen, which this browser remembers', async () => {
    await renderDashboard(t, '/search/history', { email: 'ana@acme.test' });
    const clock = (timeZone: string) =>
      new Date(searchedAt).toLocaleTimeString(undefined, { timeZone, hour: '2-digit', minute: '2-digit' });
    const local = await shownTime();
    expect(local).toMatch(/\b(E[SD]T|GMT-[45])$/);
    expect(local).toContain(clock('America/New_York'));

    await userEvent.setup().selectOptions(screen.getByLabelText('Times in'), 'UTC');
    await waitFor(async () => expect(await shownTime()).toMatch(/ UTC$/));
    expect(await shownTime()).toContain(clock('UTC'));

    cleanup();
    await renderDashboard(t, '/search/history', { email: 'ana@acme.test' });
    expect(await shownTime()).toMatch(/ UTC$/);
    expect((screen.getByLabelText('Times in') as HTMLSelectElement).value).toBe('utc');
  });
});
