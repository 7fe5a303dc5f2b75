import { screen, waitFor, within } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { channel, loadCorpus, message } from '../../../../test/support/corpus.ts';
import {
  createDeliveryKit,
  messengerRule,
  rulesUser,
  type MatchView,
  type RulesApi,
  type RuleView,
} from '../../../../test/support/rules-api.ts';
import type { TestApp } from '../../../../test/support/test-app.ts';
import { NO_RATE_LIMITS } from '../../../../test/support/delivery-api.ts';
import { renderDashboard, startTestServer } from '../../test/test-server.tsx';

const EMAIL = 'ana@acme.test';

describe('working an incident on its page', () => {
  let t: TestApp;
  let ana: RulesApi;
  let rule: RuleView;
  let match: MatchView;

  beforeAll(async () => {
    t = await startTestServer({ env: NO_RATE_LIMITS });
    ana = await rulesUser(t, 'Acme', EMAIL);
    await rulesUser(t, 'Acme', 'ben@acme.test');
    const kit = await createDeliveryKit(ana, { tag: 'acme' });
    await loadCorpus(t, [
      channel('kilo_a', [
        message(1, 'kilo-bank.com logins', { userId: 11 }),
        message(2, 'kilo-bank.com cookies', { userId: 12 }),
      ]),
    ]);
    rule = await ana.created(messengerRule(kit, 'Kilo bank', 'kilo-bank.com'));
    [match] = (await ana.matches(rule.id)).results as [MatchView];
  });
  afterAll(() => t.close());

  const work = () => screen.getByRole('region', { name: 'Work this incident' });
  const history = () =>
    within(work())
      .queryAllByRole('listitem')
      .map((item) => item.textContent);

  it('acknowledges, assigns and notes, each in the history with who; false positive excludes every hit', async () => {
    await renderDashboard(t, `/incidents/${match.id}`, { email: EMAIL });
    const user = userEvent.setup();
    await screen.findByRole('region', { name: 'Work this incident' });
    expect(await within(work()).findByText(/^Nothing yet/)).toBeTruthy();

    await user.selectOptions(within(work()).getByLabelText('Status'), 'Acknowledged');
    expect(await within(work()).findByText('Status set to acknowledged.')).toBeTruthy();
    await waitFor(() => expect(history()).toHaveLength(1));
    expect(history()[0]).toMatch(/ana@acme\.test Status: new → acknowledged$/);

    await user.selectOptions(within(work()).getByLabelText('Assignee'), 'ben@acme.test');
    await waitFor(() => expect(history()).toHaveLength(2));
    expect(history()[1]).toMatch(/Assignee: nobody → ben@acme\.test$/);

    await user.type(within(work()).getByLabelText('Note'), 'Two logins, one cookie jar');
    await user.click(within(work()).getByRole('button', { name: 'Add note' }));
    await waitFor(() => expect(history()).toHaveLength(3));
    expect(history()[2]).toMatch(/ana@acme\.test Two logins, one cookie jar$/);
    expect((within(work()).getByLabelText('Note') as HTMLTextAreaElement).value).toBe('');

    await user.click(within(work()).getByRole('button', { name: 'False positive: exclude all its hits' }));
    expect(await within(work()).findByText('Marked false positive; its hits are excluded.')).toBeTruthy();
    await waitFor(() => expect(screen.getByTestId('count-new').textContent).toBe('0'));
    expect(screen.getByTestId('count-excluded').textContent).toBe('2');
    expect((within(work()).getByLabelText('Status') as HTMLSelectElement).value).toBe('false_positive');
    expect((await ana.exclusions(rule.id)).map((e) => e.field)).toEqual(['hit_key', 'hit_key']);
  });
});
