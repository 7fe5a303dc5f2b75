import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCOUNT_SCOPE, serviceScope } from '../../src/modules/usage/limits.ts';
import { basicAuthorization, createKey } from '../api-keys/support.ts';
import {
  ACCOUNT_PATH,
  blockOf,
  dailyOf,
  expectRateLimited,
  newMember,
  rateHeaders,
  secondsBetween,
  totalOf,
  usage,
} from '../support/rate-limits.ts';
import { expectTaxiiError, injectedAnswer, TAXII_21 } from '../support/taxii-client.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';
import { testEngine } from '../support/test-store.ts';

/**
 * The TAXII server and the MISP feed count against the organization's rate limits as every
 * /service/ endpoint does (issue 26: an API key has "the same rate limits as the user"): one
 * usage service each, `taxii` and `misp_feed`. Each test has its own organization; the clock
 * stands still unless a test moves it.
 */

const NOW = '2026-03-10T09:00:00.000Z';
const MIDNIGHT = '2026-03-11T00:00:00.000Z';
const ROOT = '/taxii2/dragnet/';

const basic = (key: string) => basicAuthorization('taxii-client', key);

describe(`rate limits of the TAXII server and the MISP feed (${testEngine})`, () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
    t.clock.set(NOW);
  });
  afterAll(() => t.close());

  /** A member of a new organization, its org id, and an API key it created (read scope). */
  async function keyHolder(org: string) {
    const member = await newMember(t, org);
    const { key } = await createKey(t, member.token, { name: `${org} feed`, scope: 'read' });
    return { ...member, key };
  }

  const taxii = (url: string, authorization: string, accept = TAXII_21) =>
    t.request({ method: 'GET', url, headers: { authorization, accept } });

  /** The id of the organization's "All incidents" collection. */
  async function allIncidents(authorization: string): Promise<string> {
    const response = await taxii(`${ROOT}collections/`, authorization);
    expect(response.statusCode, response.body).toBe(200);
    return (response.json() as { collections: { id: string; title: string }[] }).collections.find(
      (collection) => collection.title === 'All incidents',
    )!.id;
  }

  const remaining = (response: LightMyRequestResponse) => rateHeaders(response).remaining;
  /** The TAXII error message of an injected response (checked as a TAXII client would). */
  const taxiiError = (response: LightMyRequestResponse, status: number) =>
    expectTaxiiError(injectedAnswer(response), status);
  const untilMidnight = () => secondsBetween(t.clock.now().toISOString(), MIDNIGHT);

  it('lists TAXII 2.1 and the MISP feed in the usage report, 10,000 per day each by default', async () => {
    const { token } = await newMember(t, 'Report');
    const report = await usage(t, token);
    expect(blockOf(report, 'taxii')).toMatchObject({ feature: 'taxii', service_name: 'TAXII 2.1' });
    expect(blockOf(report, 'misp_feed')).toMatchObject({ feature: 'misp', service_name: 'MISP feed' });
    expect(dailyOf(report, 'taxii').limit).toBe(10_000);
    expect(dailyOf(report, 'misp_feed').limit).toBe(10_000);
    // One block per route family, whatever its number of endpoints.
    expect((await usage(t, token, 'feature=taxii')).services.map((s) => s.service_slug)).toEqual(['taxii']);
    expect((await usage(t, token, 'service_slug=misp')).services.map((s) => s.service_slug).sort()).toEqual([
      'alert_system_incident_misp_event',
      'misp_feed',
    ]);
  });

  it("a key walking /taxii2/ gets a 429 in TAXII's error envelope after its daily limit, failures refunded", async () => {
    const { orgId, key, token } = await keyHolder('Taxii Walker');
    const other = await keyHolder('Taxii Other');
    const foreign = await allIncidents(`Bearer ${other.key}`);
    await t.container.limits.setOverride(orgId, serviceScope('taxii'), 'day', 3);
    const auth = basic(key);
    const UNTIL_MIDNIGHT = untilMidnight();

    const discovery = await taxii('/taxii2/', auth);
    expect(discovery.statusCode, discovery.body).toBe(200);
    expect(rateHeaders(discovery)).toMatchObject({ limit: 3, remaining: 2, reset: UNTIL_MIDNIGHT });
    expect(rateHeaders(discovery).accountLimit).toBe(100_000);

    // Another organization's collection is a 404, which is given back; so is the 403 of a write
    // (by the key's creator: a read key would be refused before counting, for its scope).
    const notOurs = await taxii(`${ROOT}collections/${foreign}/objects/`, auth);
    taxiiError(notOurs, 404);
    expect(remaining(notOurs)).toBe(2);
    const collection = await allIncidents(auth);
    const write = await t.request({
      method: 'POST',
      url: `${ROOT}collections/${collection}/objects/`,
      headers: { authorization: `Bearer ${token}`, accept: TAXII_21, 'content-type': TAXII_21 },
      body: { objects: [] },
    });
    expect(taxiiError(write, 403)).toMatchObject({ error_code: 'forbidden' });
    expect(remaining(write)).toBe(1);
    // A client that cannot read TAXII is refused before anything is counted.
    taxiiError(await taxii(ROOT, auth, 'text/html'), 406);

    const objects = await taxii(`${ROOT}collections/${collection}/objects/`, auth);
    expect(objects.statusCode, objects.body).toBe(200);
    expect(remaining(objects)).toBe(0);

    const refused = await taxii(ROOT, auth);
    const error = taxiiError(refused, 429);
    expect(error).toMatchObject({
      title: 'Too many requests',
      error_code: 'rate_limited',
      description: expect.stringContaining('limit of taxii'),
      details: {
        request_id: refused.headers['x-request-id'],
        retry_after_seconds: UNTIL_MIDNIGHT,
        limit: 3,
        remaining: 0,
        reset_at: MIDNIGHT,
      },
    });
    expect(refused.headers['retry-after']).toBe(String(UNTIL_MIDNIGHT));
    expect(rateHeaders(refused)).toMatchObject({ limit: 3, remaining: 0, reset: UNTIL_MIDNIGHT });

    // The bucket is the organization's: the key's creator is refused there with a session too,
    // and has the rest of its limits (another service) untouched.
    taxiiError(await taxii(ROOT, `Bearer ${token}`), 429);
    const report = await usage(t, token);
    expect(dailyOf(report, 'taxii')).toMatchObject({ limit: 3, used: 3, remaining: 0 });
    expect(dailyOf(report, 'misp_feed').used).toBe(0);
    // The key's creation, the three TAXII answers and the report itself.
    expect(totalOf(report, '1 Month').used).toBe(5);
  });

  it('the account-wide per-second cap covers TAXII requests, answered in the TAXII envelope', async () => {
    const { orgId, key, token } = await keyHolder('Taxii Burst');
    // A second of its own: the key's creation counted in this one.
    t.clock.advance(1000);
    await t.container.limits.setOverride(orgId, ACCOUNT_SCOPE, 'second', 2);
    expect((await t.request({ method: 'GET', url: ACCOUNT_PATH, token })).statusCode).toBe(200);
    expect((await taxii('/taxii2/', `Bearer ${key}`)).statusCode).toBe(200);

    const refused = await taxii(ROOT, `Bearer ${key}`);
    const error = taxiiError(refused, 429);
    expect(error).toMatchObject({
      description: expect.stringContaining('account-wide limit of 2'),
      details: { retry_after_seconds: 1, limit: 2 },
    });
    expect(refused.headers['retry-after']).toBe('1');
    // The next second admits again, on either side.
    t.clock.advance(1000);
    expect((await taxii(ROOT, `Bearer ${key}`)).statusCode).toBe(200);
    expect((await t.request({ method: 'GET', url: ACCOUNT_PATH, token })).statusCode).toBe(200);
  });

  it("the MISP feed answers the service's JSON 429 after its daily limit, failures refunded", async () => {
    const { orgId, key, token } = await keyHolder('Misp Fetcher');
    await t.container.limits.setOverride(orgId, serviceScope('misp_feed'), 'day', 2);
    const feed = (file: string) =>
      t.request({ method: 'GET', url: `/misp/feed/${file}`, headers: { authorization: basic(key) } });
    const UNTIL_MIDNIGHT = untilMidnight();

    const manifest = await feed('manifest.json');
    expect(manifest.statusCode, manifest.body).toBe(200);
    expect(rateHeaders(manifest)).toMatchObject({ limit: 2, remaining: 1, reset: UNTIL_MIDNIGHT });
    // An event the manifest does not list (404) and a file name that is no event (400): refunded.
    const unknown = await feed(`${randomUUID()}.json`);
    expect(unknown.statusCode, unknown.body).toBe(404);
    expect(remaining(unknown)).toBe(1);
    expect((await feed('nothing-here.json')).statusCode).toBe(400);
    const hashes = await feed('hashes.csv');
    expect(hashes.statusCode, hashes.body).toBe(200);
    expect(remaining(hashes)).toBe(0);

    const refused = await feed('manifest.json');
    const body = expectRateLimited(refused);
    expect(body).toMatchObject({ code: 'rate_limited', limit: 2, retry_after_seconds: UNTIL_MIDNIGHT });
    expect(body.message).toContain('limit of misp_feed');
    expect(rateHeaders(refused)).toMatchObject({ limit: 2, remaining: 0 });
    expect(dailyOf(await usage(t, token), 'misp_feed')).toMatchObject({ used: 2, remaining: 0 });
  });
});
