import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliResult } from '../support/cli.ts';
import { CHANNELS_PATH, blockOf, dailyOf, getTimes, totalOf, usage, type UsageBody } from '../support/rate-limits.ts';
import { createTestApp } from '../support/test-app.ts';
import { createTestStoreLocation, testEngine, type TestStoreLocation } from '../support/test-store.ts';
import { scaled } from '../support/wait.ts';

/**
 * `dragnet org set-limits <org>`: an endpoint's daily limit (`--service <slug>=<n|none|default>`,
 * repeatable), the account-wide caps (`--per-second`, `--per-month`), `--reset`. Each change is
 * checked through the API of an app opened on the same store afterwards.
 */

const SLOW_MS = scaled(120_000);
const PASSWORD = 'a long enough password 1';
const EMAIL = 'ops@limits-cli.test';

describe(`dragnet org set-limits (${testEngine})`, () => {
  let location: TestStoreLocation;

  beforeAll(async () => {
    location = await createTestStoreLocation();
    const created = await runCli(['user', 'create', '--org', 'Limited', '--email', EMAIL, '--password-stdin'], {
      env: location.env,
      input: `${PASSWORD}\n`,
    });
    expect(created.code, created.stderr).toBe(0);
  }, SLOW_MS);
  afterAll(() => location.drop());

  const setLimits = (...args: string[]): Promise<CliResult> =>
    runCli(['org', 'set-limits', 'Limited', ...args], { env: location.env });

  /** Opens an app on the store, logs in, and hands the usage report (and the app) to `check`. */
  async function throughApi(
    check: (report: UsageBody, get: (url: string, times: number) => Promise<number[]>) => Promise<void>,
  ) {
    const t = await createTestApp({ location });
    try {
      t.clock.set(new Date());
      const { access } = await t.login(EMAIL, PASSWORD);
      await check(await usage(t, access), (url, times) => getTimes(t, access, url, times));
    } finally {
      await t.close();
    }
  }

  it(
    'sets endpoint daily limits and account caps, which the API then enforces',
    async () => {
      const result = await setLimits(
        '--service',
        'messenger-channels=2',
        '--service',
        'messenger-search-create=none',
        '--per-month',
        '500',
      );
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toMatch(/service:messenger-channels\s+day\s+2/);
      expect(result.stdout).toMatch(/service:messenger-search-create\s+day\s+none/);
      expect(result.stdout).toMatch(/account\s+month\s+500/);

      await throughApi(async (report, get) => {
        expect(dailyOf(report, 'messenger-channels').limit).toBe(2);
        expect(blockOf(report, 'messenger-search-create').limits).toEqual([]);
        expect(totalOf(report, '1 Month').limit).toBe(500);
        expect(totalOf(report, '1 Second').limit).toBe(25);
        expect(await get(CHANNELS_PATH, 3)).toEqual([200, 200, 429]);
      });
    },
    SLOW_MS,
  );

  it(
    '--per-second none and --per-month none lift the account-wide caps',
    async () => {
      const result = await setLimits('--per-second', 'none', '--per-month', 'none');
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toMatch(/account\s+second\s+none/);
      expect(result.stdout).toMatch(/account\s+month\s+none/);
      await throughApi(async (report) => {
        expect(report).not.toHaveProperty('total');
      });
    },
    SLOW_MS,
  );

  it(
    '--reset restores every default',
    async () => {
      const result = await setLimits('--reset');
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain('Limited uses the default limits');
      await throughApi(async (report) => {
        expect(dailyOf(report, 'messenger-channels').limit).toBe(1000);
        expect(dailyOf(report, 'messenger-search-create').limit).toBe(100);
        expect(report.total?.map((e) => [e.period, e.limit])).toEqual([
          ['1 Second', 25],
          ['1 Month', 100_000],
        ]);
      });
    },
    SLOW_MS,
  );
});
