import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnCli } from '../support/cli-process.ts';
import { settingPath } from '../support/delivery-api.ts';
import { createDeliveryKit, createRulesApp, messengerRule, rulesUser, type RulesApi } from '../support/rules-api.ts';
import type { TestApp } from '../support/test-app.ts';
import { testEngine } from '../support/test-store.ts';
import { scaled } from '../support/wait.ts';

const AT_ONCE = 20;
const CLI_MS = scaled(120_000);

/**
 * What is created when missing, or refused when it exists, is decided by a unique key, not by
 * a read before the write: many identical requests at once (on PostgreSQL each on a connection
 * of its own) create one row, and the others see it.
 */
describe(`identical creates at once (${testEngine})`, () => {
  let t: TestApp;
  let alice: RulesApi;

  beforeAll(async () => {
    t = await createRulesApp({ env: { DRAGNET_RATE_LIMITS: 'off' } });
    alice = await rulesUser(t, 'Acme', 'alice@acme.test');
  });
  afterAll(async () => {
    await t?.close();
  });

  it('a new organization reading its templates at once gets one default template', async () => {
    const bob = await rulesUser(t, 'Globex', 'bob@globex.test');
    const lists = await Promise.all(
      Array.from({ length: AT_ONCE }, () =>
        t.request({ method: 'GET', url: settingPath('get_template_list'), token: bob.token }),
      ),
    );
    for (const list of lists) expect(list.statusCode, list.body).toBe(200);
    const after = (
      await t.request({ method: 'GET', url: settingPath('get_template_list'), token: bob.token })
    ).json() as {
      results: { is_default: boolean }[];
    };
    expect(after.results).toHaveLength(1);
    expect(after.results[0]!.is_default).toBe(true);
  });

  it('the same exclusion sent many times at once is created once; the others are 409', async () => {
    const kit = await createDeliveryKit(alice, { tag: 'x' });
    const rule = await alice.created(messengerRule(kit, 'Exclusions at once', 'acme-bank.com'));
    const answers = await Promise.all(
      Array.from({ length: AT_ONCE }, () =>
        alice.createExclusion(rule.id, { field: 'channel_username', value: 'noise_channel' }),
      ),
    );
    expect(answers.map((a) => a.statusCode).sort()).toEqual([201, ...Array<number>(AT_ONCE - 1).fill(409)]);
    expect(await alice.exclusions(rule.id)).toEqual([
      expect.objectContaining({ field: 'channel_username', value: 'noise_channel' }),
    ]);
  });

  it(
    'one limit set by several processes at once holds one of their values, without an error',
    async () => {
      const processes = Array.from({ length: 4 }, (_, i) =>
        spawnCli(['org', 'set-limits', 'Acme', '--per-second', String(100 + i)], { env: t.location.env }),
      );
      for (const { done } of processes) {
        const result = await done;
        expect(result.code, result.stderr).toBe(0);
      }
      // The first usage report of this organization in the app: no cached limits to outlive.
      const usage = (await alice.get('/service/get_usage_limits/')).json() as {
        total: { period: string; limit: number }[];
      };
      expect([100, 101, 102, 103]).toContain(usage.total.find((entry) => entry.period === '1 Second')!.limit);
    },
    CLI_MS,
  );
});
