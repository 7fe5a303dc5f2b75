import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/lib/clock.ts';
import { serviceScope } from '../../src/modules/usage/limits.ts';
import {
  CHANNELS_PATH,
  dailyOf,
  expectRateLimited,
  getTimes,
  newMember,
  totalOf,
  usage,
} from '../support/rate-limits.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';
import { createTestStoreLocation, testEngine, type TestStoreLocation } from '../support/test-store.ts';

/**
 * Counts survive a restart: the app and its container are closed (the embedded counters write
 * their counts behind to the store on close) and a new one is built on the same store.
 */

const SEARCH = '/service/messenger-search-create/';

describe(`rate-limit counts across a restart (${testEngine})`, () => {
  let location: TestStoreLocation;
  const clock = createManualClock('2026-03-10T09:00:00.000Z');
  let email = '';
  let orgId = 0;

  beforeAll(async () => {
    location = await createTestStoreLocation();
  });
  afterAll(() => location.drop());

  /** Runs `body` on an app over the shared store location, closing it afterwards. */
  async function withApp<T>(body: (t: TestApp) => Promise<T>): Promise<T> {
    const t = await createTestApp({ location, clock });
    try {
      return await body(t);
    } finally {
      await t.close();
    }
  }

  it('counts made before a restart are still counted after it', async () => {
    await withApp(async (t) => {
      const member = await newMember(t, 'Restarted');
      email = member.email;
      orgId = member.orgId;
      await t.container.limits.setOverride(orgId, serviceScope('messenger-channels'), 'day', 4);
      expect(await getTimes(t, member.token, CHANNELS_PATH, 3)).toEqual([200, 200, 200]);
      expect(
        (await t.request({ method: 'POST', url: SEARCH, token: member.token, body: { query: 'before restart' } }))
          .statusCode,
      ).toBe(200);
      // Refunded, so it must not reappear after the restart.
      expect((await t.request({ method: 'POST', url: SEARCH, token: member.token, body: {} })).statusCode).toBe(400);
    });

    await withApp(async (t) => {
      const { access } = await t.login(email);
      const report = await usage(t, access);
      expect(dailyOf(report, 'messenger-channels')).toMatchObject({ limit: 4, used: 3, remaining: 1 });
      expect(dailyOf(report, 'messenger-search-create')).toMatchObject({ used: 1, remaining: 99 });
      expect(totalOf(report, '1 Month').used).toBe(5);
      // Still enforced: one unit left.
      expect(await getTimes(t, access, CHANNELS_PATH, 2)).toEqual([200, 429]);
    });
  });

  it('and again after a second restart; refusals and failed calls are never counted', async () => {
    clock.set('2026-03-10T10:00:00.000Z');
    await withApp(async (t) => {
      const { access } = await t.login(email);
      expectRateLimited(await t.request({ method: 'GET', url: CHANNELS_PATH, token: access }));
      const report = await usage(t, access);
      expect(dailyOf(report, 'messenger-channels')).toMatchObject({ used: 4, remaining: 0 });
      // 4 channel requests, 1 search, the report of the last run and this one; no 400, no 429.
      expect(totalOf(report, '1 Month').used).toBe(7);
    });
  });

  it('a restart on the next day sees a fresh daily window but the same monthly one', async () => {
    clock.set('2026-03-11T00:00:00.000Z');
    await withApp(async (t) => {
      const { access } = await t.login(email);
      const report = await usage(t, access);
      expect(dailyOf(report, 'messenger-channels')).toMatchObject({ used: 0, remaining: 4 });
      expect(totalOf(report, '1 Month').used).toBe(8);
    });
  });
});
