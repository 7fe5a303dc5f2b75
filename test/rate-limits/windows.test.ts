import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCOUNT_SCOPE, serviceScope } from '../../src/modules/usage/limits.ts';
import {
  CATEGORIES_PATH,
  CHANNELS_PATH,
  dailyOf,
  expectRateLimited,
  newMember,
  rateHeaders,
  totalOf,
  usage,
} from '../support/rate-limits.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';
import { testEngine } from '../support/test-store.ts';

/**
 * Spec 8.1.3: windows are calendar-aligned in UTC: a second, a day ending at UTC midnight, a
 * month ending at month end. Each edge is probed on both sides with the manual clock: the last
 * millisecond of a window (…23:59:59.999) is still in it, the first of the next (00:00:00.000)
 * starts afresh.
 */

const DAY_S = 86_400;

describe(`calendar-aligned UTC windows (${testEngine})`, () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  /** Sets the clock and logs in again (access tokens live 24 hours on the same clock). */
  async function at(iso: string, email: string): Promise<string> {
    t.clock.set(iso);
    return (await t.login(email)).access;
  }
  const get = (url: string, token: string) => t.request({ method: 'GET', url, token });

  it('per second: 25 requests fill the second, …00.999 is refused, …01.000 starts a new second', async () => {
    const { email } = await newMember(t, 'Second Edge');
    const token = await at('2026-03-10T09:00:00.000Z', email);
    for (let i = 0; i < 25; i++) {
      t.clock.set(new Date(Date.parse('2026-03-10T09:00:00.000Z') + i * 40));
      expect((await get(i % 2 ? CHANNELS_PATH : CATEGORIES_PATH, token)).statusCode, `request ${i + 1}`).toBe(200);
    }
    t.clock.set('2026-03-10T09:00:00.999Z');
    const refused = await get(CHANNELS_PATH, token);
    expect(expectRateLimited(refused)).toMatchObject({
      limit: 25,
      retry_after_seconds: 1,
      reset_at: '2026-03-10T09:00:01.000Z',
    });
    expect(refused.headers['retry-after']).toBe('1');

    // Calendar-aligned, not sliding: the whole next second is available at once.
    t.clock.set('2026-03-10T09:00:01.000Z');
    for (let i = 0; i < 25; i++)
      expect((await get(CHANNELS_PATH, token)).statusCode, `next second, request ${i + 1}`).toBe(200);
    expectRateLimited(await get(CHANNELS_PATH, token));

    t.clock.set('2026-03-10T09:00:02.000Z');
    const report = await usage(t, token);
    expect(totalOf(report, '1 Second')).toMatchObject({ limit: 25, used: 1, remaining: 24, reset_seconds: 1 });
    expect(totalOf(report, '1 Month').used).toBe(51);
  });

  it('per day: the limit holds until 23:59:59.999 UTC and resets at 00:00:00.000 UTC', async () => {
    const { email, orgId } = await newMember(t, 'Day Edge');
    await t.container.limits.setOverride(orgId, serviceScope('messenger-channels'), 'day', 2);
    let token = await at('2026-03-10T00:00:00.000Z', email);
    const first = await get(CHANNELS_PATH, token);
    expect(rateHeaders(first)).toMatchObject({ limit: 2, remaining: 1, reset: DAY_S });

    token = await at('2026-03-10T23:59:59.000Z', email);
    const second = await get(CHANNELS_PATH, token);
    expect(rateHeaders(second)).toMatchObject({ limit: 2, remaining: 0, reset: 1 });

    t.clock.set('2026-03-10T23:59:59.999Z');
    const refused = await get(CHANNELS_PATH, token);
    expect(expectRateLimited(refused)).toMatchObject({
      limit: 2,
      retry_after_seconds: 1,
      reset_at: '2026-03-11T00:00:00.000Z',
    });
    expect(dailyOf(await usage(t, token), 'messenger-channels')).toMatchObject({
      used: 2,
      remaining: 0,
      reset_seconds: 1,
    });

    t.clock.set('2026-03-11T00:00:00.000Z');
    const next = await get(CHANNELS_PATH, token);
    expect(next.statusCode).toBe(200);
    expect(rateHeaders(next)).toMatchObject({ limit: 2, remaining: 1, reset: DAY_S });
    const report = await usage(t, token);
    expect(dailyOf(report, 'messenger-channels')).toMatchObject({ used: 1, remaining: 1, reset_seconds: DAY_S });
    // The monthly account window does not reset with the day: 3 channel requests and 2 reports.
    expect(totalOf(report, '1 Month').used).toBe(5);
  });

  it('per month across the leap day: February 2028 ends at 2028-03-01T00:00:00.000Z, not at the end of the 28th', async () => {
    const { email, orgId } = await newMember(t, 'Leap Month');
    await t.container.limits.setOverride(orgId, ACCOUNT_SCOPE, 'month', 3);

    let token = await at('2028-02-01T00:00:00.000Z', email);
    const first = await get(CHANNELS_PATH, token);
    expect(rateHeaders(first)).toMatchObject({ accountLimit: 3, accountRemaining: 2, accountReset: 29 * DAY_S });

    token = await at('2028-02-28T23:59:59.999Z', email);
    expect(rateHeaders(await get(CHANNELS_PATH, token))).toMatchObject({
      remaining: 999,
      reset: 1,
      accountRemaining: 1,
      accountReset: DAY_S + 1,
    });

    // The 29th is a day of its own (a fresh daily window) in the same month.
    t.clock.set('2028-02-29T00:00:00.000Z');
    expect(rateHeaders(await get(CHANNELS_PATH, token))).toMatchObject({
      remaining: 999,
      reset: DAY_S,
      accountRemaining: 0,
      accountReset: DAY_S,
    });

    token = await at('2028-02-29T23:59:59.999Z', email);
    const refused = await get(CATEGORIES_PATH, token);
    expect(expectRateLimited(refused)).toMatchObject({
      limit: 3,
      retry_after_seconds: 1,
      reset_at: '2028-03-01T00:00:00.000Z',
    });

    t.clock.set('2028-03-01T00:00:00.000Z');
    const march = await get(CATEGORIES_PATH, token);
    expect(march.statusCode).toBe(200);
    expect(rateHeaders(march)).toMatchObject({ accountLimit: 3, accountRemaining: 2, accountReset: 31 * DAY_S });
  });

  it('per month at the year end: December 2027 ends at 2028-01-01T00:00:00.000Z', async () => {
    const { email, orgId } = await newMember(t, 'Year End Month');
    await t.container.limits.setOverride(orgId, ACCOUNT_SCOPE, 'month', 1);

    let token = await at('2027-12-01T00:00:00.000Z', email);
    expect(rateHeaders(await get(CHANNELS_PATH, token))).toMatchObject({
      accountRemaining: 0,
      accountReset: 31 * DAY_S,
    });

    token = await at('2027-12-31T23:59:59.999Z', email);
    const refused = await get(CHANNELS_PATH, token);
    expect(expectRateLimited(refused)).toMatchObject({
      limit: 1,
      retry_after_seconds: 1,
      reset_at: '2028-01-01T00:00:00.000Z',
    });
    expect(refused.headers['retry-after']).toBe('1');

    t.clock.set('2028-01-01T00:00:00.000Z');
    const january = await get(CHANNELS_PATH, token);
    expect(january.statusCode).toBe(200);
    expect(rateHeaders(january)).toMatchObject({ accountLimit: 1, accountRemaining: 0, accountReset: 31 * DAY_S });
    expectRateLimited(await get(CHANNELS_PATH, token));
  });

  it('per day at the year end: 2027-12-31T23:59:59.999Z is still the old day', async () => {
    const { email, orgId } = await newMember(t, 'Year End Day');
    await t.container.limits.setOverride(orgId, serviceScope('messenger-channels'), 'day', 1);

    let token = await at('2027-12-31T00:00:00.000Z', email);
    expect((await get(CHANNELS_PATH, token)).statusCode).toBe(200);
    token = await at('2027-12-31T23:59:59.999Z', email);
    expect(expectRateLimited(await get(CHANNELS_PATH, token))).toMatchObject({
      reset_at: '2028-01-01T00:00:00.000Z',
      retry_after_seconds: 1,
    });
    t.clock.set('2028-01-01T00:00:00.000Z');
    expect(rateHeaders(await get(CHANNELS_PATH, token))).toMatchObject({ limit: 1, remaining: 0, reset: DAY_S });
  });

  it('the usage report counts down to the window ends in whole seconds', async () => {
    const { email } = await newMember(t, 'Report Resets');
    const token = await at('2028-02-29T12:00:00.500Z', email);
    const report = await usage(t, token);
    expect(totalOf(report, '1 Second').reset_seconds).toBe(1);
    expect(totalOf(report, '1 Month').reset_seconds).toBe(DAY_S / 2);
    expect(dailyOf(report, 'messenger-channels').reset_seconds).toBe(DAY_S / 2);
    for (const block of report.services)
      for (const entry of block.limits) expect(Number.isInteger(entry.reset_seconds)).toBe(true);
  });
});
