import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnTick, tickSummary } from '../support/cli-process.ts';
import { channel, message } from '../support/corpus.ts';
import {
  createDeliveryKit,
  createRulesApp,
  HOUR,
  messengerRule,
  payloadOf,
  requestsTo,
  rulesEnv,
  rulesUser,
  writeCorpus,
} from '../support/rules-api.ts';
import { killServer, startServer, type ServerProcess } from '../support/server-process.ts';
import type { TestApp } from '../support/test-app.ts';
import { createTestStoreLocation, testEngine, type TestStoreLocation } from '../support/test-store.ts';
import { scaled } from '../support/wait.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

const T0 = Date.parse('2026-03-10T09:00:00Z');

/**
 * `dragnet rules tick` as cron runs it: on the server's store, but without the server's HOST,
 * PORT or DRAGNET_DASHBOARD_URL. Its links must point where the server runs, not at the CLI's
 * own default of 127.0.0.1:8080.
 */
describe(`rules: notification links from a tick run by cron (${testEngine})`, () => {
  let location: TestStoreLocation;
  let t: TestApp;
  let receiver: WebhookReceiver;
  let server: ServerProcess | undefined;
  let cronEnv: Record<string, string>;

  beforeAll(async () => {
    // Empty values override whatever the test runner's own environment has.
    cronEnv = { ...(await rulesEnv()), HOST: '', PORT: '', DRAGNET_DASHBOARD_URL: '' };
    receiver = await startWebhookReceiver();
    location = await createTestStoreLocation();
    t = await createRulesApp({ location });
  });
  afterAll(async () => {
    await killServer(server);
    await t?.close();
    await location?.drop();
    await receiver?.close();
  });

  it(
    "links to the address the server runs at, or to the organization's dashboard_url when it has one",
    async () => {
      server = await startServer({ ...location.env, ...cronEnv, HOST: '127.0.0.1', PORT: '0' }, scaled(60_000), [
        '--no-worker',
      ]);
      expect(server.baseUrl).not.toBe('http://127.0.0.1:8080');

      const acme = await rulesUser(t, 'Acme', 'alice@acme.test');
      const globex = await rulesUser(t, 'Globex', 'gina@globex.test');
      await t.container.organizations.update('Globex', { dashboardUrl: 'https://intel.globex.test/' });
      const acmeKit = await createDeliveryKit(acme, { tag: 'acme', receiver });
      const globexKit = await createDeliveryKit(globex, { tag: 'globex', receiver });
      await acme.created(messengerRule(acmeKit, 'Acme leaks', 'acme-bank.com', { recipients: [] }));
      await globex.created(messengerRule(globexKit, 'Globex leaks', 'globex-bank.com', { recipients: [] }));
      await writeCorpus(t, [
        channel('bank_leaks', [
          message(1, 'acme-bank.com logs', { date: T0 + HOUR }),
          message(2, 'globex-bank.com logs', { date: T0 + HOUR }),
        ]),
      ]);

      const summary = await tickSummary(spawnTick(new Date(T0 + 24 * HOUR), { ...location.env, ...cronEnv }));
      expect(summary).toMatchObject({ ran: 2, matches: 2 });

      const [acmeHook] = requestsTo(receiver, acmeKit);
      const [globexHook] = requestsTo(receiver, globexKit);
      expect(payloadOf(acmeHook!).results_url).toMatch(new RegExp(`^${server.baseUrl}/incidents/\\d+`));
      expect(payloadOf(globexHook!).results_url).toMatch(/^https:\/\/intel\.globex\.test\/incidents\/\d+/);
    },
    scaled(180_000),
  );
});
