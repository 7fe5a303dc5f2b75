import { screen, waitFor, within } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { channel, loadCorpus, message } from '../../../../test/support/corpus.ts';
import { NO_RATE_LIMITS } from '../../../../test/support/delivery-api.ts';
import {
  createDeliveryKit,
  deliverPending,
  messengerRule,
  requestsTo,
  rulesUser,
  type DeliveryKit,
  type RulesApi,
} from '../../../../test/support/rules-api.ts';
import type { TestApp } from '../../../../test/support/test-app.ts';
import { scaled } from '../../../../test/support/wait.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../../../test/support/webhook-receiver.ts';
import { renderDashboard, startTestServer } from '../../test/test-server.tsx';
import { datetimeLocalValue } from './datetime-input.ts';

const EMAIL = 'sam@acme.test';
const HOUR = 3_600_000;

describe("the rule page's pause, run now, preview and deliveries", () => {
  let t: TestApp;
  let sam: RulesApi;
  let kit: DeliveryKit;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    t = await startTestServer({ env: { ...NO_RATE_LIMITS, DRAGNET_WEBHOOK_ALLOW_HOSTS: '127.0.0.1' } });
    sam = await rulesUser(t, 'Acme', EMAIL);
    kit = await createDeliveryKit(sam, { tag: 'steer', receiver });
    const now = Date.now();
    await loadCorpus(t, [
      channel('steer_leaks', [
        message(1, 'steer-bank.com logs', { date: now - 3 * HOUR, userId: 4 }),
        message(2, 'steer-bank.com combo', { date: now - 2 * HOUR, userId: 5 }),
        message(3, 'steer-bank.com from last month', { date: now - 40 * 24 * HOUR }),
      ]),
    ]);
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  const pauseState = (ruleId: number) =>
    sam.getJson<{ is_paused: boolean }>(`/service/alert_system_rule_pause_state/${ruleId}/`);

  it('pauses and resumes the rule, and the rules list shows it paused', async () => {
    const rule = await sam.created(messengerRule(kit, 'Steered', 'steer-bank.com'));
    await renderDashboard(t, `/rules/${rule.id}`, { email: EMAIL });
    const user = userEvent.setup();
    const schedule = within(await screen.findByRole('region', { name: 'Schedule' }));
    expect((await schedule.findByRole('status')).textContent).toContain('Active');
    await user.click(schedule.getByRole('button', { name: 'Pause Steered' }));
    await waitFor(() => expect(schedule.getAllByRole('status')[0]!.textContent).toMatch(/paused since/));
    expect(await pauseState(rule.id)).toMatchObject({ is_paused: true });

    await renderDashboard(t, '/rules', { email: EMAIL });
    const row = (await screen.findAllByRole('link', { name: 'Steered' })).at(-1)!.closest('tr')!;
    await waitFor(() => expect(within(row).getByText('paused')).toBeTruthy());

    // The pause is done once what it changed has been read again: the button is enabled then.
    const resume = schedule.getByRole('button', { name: 'Resume Steered' }) as HTMLButtonElement;
    await waitFor(() => expect(resume.disabled).toBe(false));
    await user.click(resume);
    await waitFor(() => expect(schedule.getAllByRole('status')[0]!.textContent).toContain('Active'));
    expect(await pauseState(rule.id)).toMatchObject({ is_paused: false });
  });

  it('runs the rule now: the new hit opens its incident, and the webhook delivery shows in its deliveries', async () => {
    const rule = await sam.created(messengerRule(kit, 'Run me', 'steer-bank.com'));
    await deliverPending(t);
    await loadCorpus(t, [
      channel('steer_leaks', [message(4, 'steer-bank.com brand new', { date: Date.parse(rule.last_run!) + 1 })]),
    ]);
    await renderDashboard(t, `/rules/${rule.id}`, { email: EMAIL });
    const user = userEvent.setup();
    await user.click(await screen.findByRole('button', { name: 'Run now' }));
    const link = await screen.findByRole('link', { name: 'Open the incident' }, { timeout: scaled(15_000) });
    expect(link.closest('p')!.textContent).toContain('Found 1 new hit.');
    const [newest] = (await sam.matches(rule.id)).results;
    expect(link.getAttribute('href')).toBe(`/incidents/${newest!.id}`);
    expect((await sam.hits(newest!.id)).results.map((hit) => hit.message_id)).toEqual([4]);

    await deliverPending(t);
    expect(requestsTo(receiver, kit).length).toBeGreaterThanOrEqual(2);
    const deliveries = within(screen.getByRole('region', { name: 'Deliveries' }));
    await user.click(deliveries.getByRole('button', { name: 'Refresh' }));
    const table = await deliveries.findByRole('table', { name: "The rule's deliveries" });
    await waitFor(() => expect(within(table).getAllByText('webhook · notification')).toHaveLength(2));
    expect(within(table).getAllByText('sent')).toHaveLength(2);
  });

  it('previews a past window: the hits are shown, and no match is stored', async () => {
    const rule = await sam.created(messengerRule(kit, 'Preview me', 'steer-bank.com'));
    const matchesBefore = (await sam.matches(rule.id)).count;
    await renderDashboard(t, `/rules/${rule.id}`, { email: EMAIL });
    const user = userEvent.setup();
    const preview = within(await screen.findByRole('region', { name: 'Preview' }));
    // The window: a week up to 90 minutes ago, so last month's message and the run-now test's are not in it.
    const setWindow = async (from: number, to: number) => {
      for (const [label, at] of [
        ['From', from],
        ['To', to],
      ] as const) {
        const input = preview.getByLabelText(label);
        await user.clear(input);
        await user.type(input, datetimeLocalValue(at));
      }
      await user.click(preview.getByRole('button', { name: 'Preview' }));
    };
    await setWindow(Date.now() - 7 * 24 * HOUR, Date.now() - 1.5 * HOUR);
    const hits = await preview.findByRole('list', { name: 'Preview hits' }, { timeout: scaled(15_000) });
    expect(preview.getByText(/^2 hits between/)).toBeTruthy();
    expect(
      within(hits)
        .getAllByRole('listitem')
        .map((item) => within(item).getByText(/^steer-bank/).textContent),
    ).toEqual(['steer-bank.com combo', 'steer-bank.com logs']);
    expect((await sam.matches(rule.id)).count).toBe(matchesBefore);

    // A window the server refuses says why, naming the field.
    await setWindow(Date.now() - 40 * 24 * HOUR, Date.now() - HOUR);
    expect((await preview.findByRole('alert')).textContent).toMatch(/to.*at most 31 days/);
  });
});
