import { screen } from '@testing-library/react';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { channel, loadCorpus, message } from '../../../../test/support/corpus.ts';
import { NO_RATE_LIMITS } from '../../../../test/support/delivery-api.ts';
import { createDeliveryKit, messengerRule, rulesUser, type MatchView } from '../../../../test/support/rules-api.ts';
import type { TestApp } from '../../../../test/support/test-app.ts';
import { downloadedBy } from '../../test/downloads.ts';
import { renderDashboard, startTestServer } from '../../test/test-server.tsx';

const EMAIL = 'ana@acme.test';

describe('the MISP event button of the incident page', () => {
  let t: TestApp;
  let match: MatchView;
  beforeAll(async () => {
    t = await startTestServer({ env: NO_RATE_LIMITS });
    const ana = await rulesUser(t, 'Acme', EMAIL);
    const kit = await createDeliveryKit(ana, { tag: 'acme' });
    await loadCorpus(t, [channel('golf_a', [message(1, 'golf-bank.com logins'), message(2, 'golf-bank.com db')])]);
    const rule = await ana.created(messengerRule(kit, 'Golf bank', 'golf-bank.com'));
    [match] = (await ana.matches(rule.id)).results as [MatchView];
  });
  afterAll(() => t.close());

  it('downloads the incident as a MISP event file', async () => {
    await renderDashboard(t, `/incidents/${match.id}`, { email: EMAIL });
    await screen.findByRole('button', { name: 'MISP event' });
    const file = await downloadedBy('MISP event');
    const event = JSON.parse(file.text) as {
      Event: { uuid: string; info: string; Tag: { name: string }[]; Attribute: unknown[] };
    };
    expect(file.name).toBe(`misp-event-${event.Event.uuid}.json`);
    expect(event.Event.info).toBe('Golf bank (Messenger channels)');
    expect(event.Event.Tag.map((tag) => tag.name)).toEqual(['tlp:amber', 'dragnet:source="messenger"']);
    expect(event.Event.Attribute.length).toBeGreaterThan(0);
  });
});
