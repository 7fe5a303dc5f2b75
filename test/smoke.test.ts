import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/test-app.ts';

describe('trunk smoke', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
    await t.createUser({ org: 'Acme', email: 'alice@acme.test' });
  });
  afterAll(() => t.close());

  it('logs in and reads the account', async () => {
    const { access } = await t.login('alice@acme.test');
    const response = await t.request({ method: 'GET', url: '/service/account/', token: access });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({
      email: 'alice@acme.test',
      organization: 'Acme',
      two_factor_enabled: false,
    });
  });

  it('answers readiness with the engine in use', async () => {
    const response = await t.request({ method: 'GET', url: '/readyz' });
    expect(response.json().status).toBe('ready');
  });
});
