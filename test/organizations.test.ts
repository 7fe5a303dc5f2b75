import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, fieldsOf } from './support/http.ts';
import { createTestApp, type TestApp } from './support/test-app.ts';

describe('organizations over HTTP', () => {
  let t: TestApp;
  const ids: Record<string, number> = {};
  const tokens: Record<'member' | 'mssp' | 'managedMember' | 'system', string> = {
    member: '',
    mssp: '',
    managedMember: '',
    system: '',
  };

  beforeAll(async () => {
    t = await createTestApp();
    const orgs = t.container.organizations;
    ids.Acme = (await orgs.create('Acme')).id;
    ids.MSSP = (await orgs.create('MSSP')).id;
    ids.ManagedOne = (await orgs.create('Managed One', { managedBy: 'MSSP' })).id;
    ids.ManagedTwo = (await orgs.create('Managed Two')).id;
    await orgs.update('Managed Two', { managedBy: 'MSSP' });
    ids.Detached = (await orgs.create('Detached', { managedBy: 'MSSP' })).id;
    ids.Other = (await orgs.create('Other')).id;

    await t.createUser({ org: 'Acme', email: 'member@acme.test' });
    await t.createUser({ org: 'MSSP', email: 'analyst@mssp.test' });
    await t.createUser({ org: 'Managed One', email: 'member@managed-one.test' });
    await t.createUser({ org: 'Operator', email: 'ops@operator.test', role: 'system' });
    ids.Operator = (await orgs.showByName('Operator')).id;
    tokens.member = (await t.login('member@acme.test')).access;
    tokens.mssp = (await t.login('analyst@mssp.test')).access;
    tokens.managedMember = (await t.login('member@managed-one.test')).access;
    tokens.system = (await t.login('ops@operator.test')).access;
  });
  afterAll(() => t.close());

  const getOrg = (who: keyof typeof tokens, options: { query?: number | string; header?: number | string } = {}) =>
    t.request({
      method: 'GET',
      url: `/service/organization/${options.query === undefined ? '' : `?org_id=${options.query}`}`,
      token: tokens[who],
      headers: options.header === undefined ? undefined : { 'x-org-id': String(options.header) },
    });

  it("returns the caller's organization with its defaults", async () => {
    const response = await getOrg('member');
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      id: ids.Acme,
      name: 'Acme',
      alert_rule_limit: 20,
      used_credits: 0,
      default_frequency: 'daily',
      dashboard_url: 'http://127.0.0.1:8080',
      managed_by_org_id: null,
      created_at: t.clock.now().toISOString(),
    });
  });

  it('a member may name its own organization', async () => {
    expect((await getOrg('member', { query: ids.Acme! })).json().name).toBe('Acme');
    expect((await getOrg('member', { header: ids.Acme! })).json().name).toBe('Acme');
  });

  it('a plain member asking for another organization is 403, whether it exists or not', async () => {
    for (const options of [
      { query: ids.Other! },
      { header: ids.Other! },
      { query: ids.ManagedOne! },
      { query: 999_999 },
    ]) {
      const body = expectError(await getOrg('member', options), 403, 'forbidden');
      expect(fieldsOf(body)).toEqual(['org_id']);
    }
  });

  it('a managed organization cannot read its MSSP', async () => {
    expectError(await getOrg('managedMember', { query: ids.MSSP! }), 403, 'forbidden');
  });

  it('an MSSP user reads its own organization by default and managed ones by query or header', async () => {
    expect((await getOrg('mssp')).json()).toMatchObject({ id: ids.MSSP, name: 'MSSP', managed_by_org_id: null });

    const byQuery = await getOrg('mssp', { query: ids.ManagedOne! });
    expect(byQuery.statusCode).toBe(200);
    expect(byQuery.json()).toMatchObject({ id: ids.ManagedOne, name: 'Managed One', managed_by_org_id: ids.MSSP });

    const byHeader = await getOrg('mssp', { header: ids.ManagedTwo! });
    expect(byHeader.statusCode).toBe(200);
    expect(byHeader.json()).toMatchObject({ id: ids.ManagedTwo, name: 'Managed Two', managed_by_org_id: ids.MSSP });
  });

  it('an MSSP user gets 404 for an unmanaged organization, the same as for one that does not exist', async () => {
    const unmanaged = expectError(await getOrg('mssp', { query: ids.Other! }), 404, 'not_found');
    const missing = expectError(await getOrg('mssp', { query: 999_999 }), 404, 'not_found');
    expect(unmanaged.message).toBe(missing.message);
    expectError(await getOrg('mssp', { header: ids.Acme! }), 404, 'not_found');
  });

  it('an MSSP loses access when the organization is detached', async () => {
    expect((await getOrg('mssp', { query: ids.Detached! })).statusCode).toBe(200);
    await t.container.organizations.update('Detached', { managedBy: null });
    expectError(await getOrg('mssp', { query: ids.Detached! }), 404, 'not_found');
  });

  it('a system user reads any organization', async () => {
    for (const name of ['Acme', 'Other', 'ManagedOne', 'MSSP'] as const) {
      const response = await getOrg('system', { query: ids[name]! });
      expect(response.statusCode).toBe(200);
      expect(response.json().id).toBe(ids[name]);
    }
    expect((await getOrg('system', { header: ids.Other! })).json().name).toBe('Other');
    expectError(await getOrg('system', { query: 999_999 }), 404, 'not_found');
  });

  it('an org_id that is not a positive integer is 400 naming org_id', async () => {
    for (const options of [{ query: 0 }, { query: 'abc' }, { header: '-3' }, { header: '1.5' }]) {
      const body = expectError(await getOrg('mssp', options), 400);
      expect(fieldsOf(body)).toEqual(['org_id']);
    }
  });

  describe('GET /service/organizations/', () => {
    const list = async (who: keyof typeof tokens) => {
      const response = await t.request({ method: 'GET', url: '/service/organizations/', token: tokens[who] });
      expect(response.statusCode).toBe(200);
      const body = response.json() as { items: { id: number; name: string }[]; total: number };
      expect(body.total).toBe(body.items.length);
      return body.items.map((o) => o.name).sort();
    };

    it("lists a member's own organization only", async () => {
      expect(await list('member')).toEqual(['Acme']);
    });

    it('lists an MSSP and the organizations it manages', async () => {
      await expect(list('mssp')).resolves.toEqual(expect.arrayContaining(['MSSP', 'Managed One', 'Managed Two']));
      const names = await list('mssp');
      expect(names).not.toContain('Other');
      expect(names).not.toContain('Acme');
    });

    it('lists every organization for a system user', async () => {
      expect(await list('system')).toEqual(
        expect.arrayContaining(['Acme', 'MSSP', 'Managed One', 'Managed Two', 'Other', 'Operator']),
      );
    });

    it('needs a token', async () => {
      expectError(await t.request({ method: 'GET', url: '/service/organizations/' }), 401, 'unauthorized');
    });
  });
});

describe('organization defaults from configuration', () => {
  it('uses DRAGNET_DEFAULT_ALERT_RULE_LIMIT and DRAGNET_DASHBOARD_URL for new organizations', async () => {
    const t = await createTestApp({
      env: { DRAGNET_DEFAULT_ALERT_RULE_LIMIT: '7', DRAGNET_DASHBOARD_URL: 'https://intel.example.test/' },
    });
    try {
      await t.createUser({ org: 'Acme', email: 'member@acme.test' });
      const { access } = await t.login('member@acme.test');
      const org = (await t.request({ method: 'GET', url: '/service/organization/', token: access })).json();
      expect(org).toMatchObject({ alert_rule_limit: 7, dashboard_url: 'https://intel.example.test' });
    } finally {
      await t.close();
    }
  });
});
