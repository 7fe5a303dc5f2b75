import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './support/cli.ts';
import { expectError } from './support/http.ts';
import { createTestApp, DEFAULT_PASSWORD, type TestApp } from './support/test-app.ts';
import { createTestStoreLocation, testEngine, type TestStoreLocation } from './support/test-store.ts';
import { scaled } from './support/wait.ts';

// Each command is a fresh Node process (bin/dragnet.js on dist/): under a second each, seconds on a busy machine.
const CLI_TEST_MS = scaled(120_000);

// Tests touch different organizations and users, so they do not depend on each other's order.
describe('the dragnet command', () => {
  let location: TestStoreLocation;
  /** An app on the same store the commands write, to check what they did through the API. */
  let t: TestApp;
  const cli = (args: string[], input?: string) => runCli(args, { env: location.env, input });

  beforeAll(async () => {
    location = await createTestStoreLocation();
    t = await createTestApp({ location });
  });
  afterAll(async () => {
    await t.close();
    await location.drop();
  });

  const loginStatus = async (email: string, password: string) =>
    (await t.request({ method: 'POST', url: '/token/', body: { email, password } })).statusCode;

  it(
    'org create, list, show and set',
    async () => {
      const created = await cli(['org', 'create', 'Acme', '--alert-rule-limit', '7']);
      expect(created.code, created.stderr).toBe(0);
      expect(created.stdout).toContain('Acme');

      const [listed, shown] = await Promise.all([cli(['--json', 'org', 'list']), cli(['org', 'show', 'Acme'])]);
      expect(listed.code, listed.stderr).toBe(0);
      const orgs = JSON.parse(listed.stdout) as { name: string; alert_rule_limit: number }[];
      expect(orgs.find((o) => o.name === 'Acme')).toMatchObject({ alert_rule_limit: 7, default_frequency: 'daily' });

      expect(shown.code, shown.stderr).toBe(0);
      expect(shown.stdout).toMatch(/^name\s+Acme$/m);
      expect(shown.stdout).toMatch(/^alert_rule_limit\s+7$/m);

      const set = await cli(['org', 'set', 'Acme', '--alert-rule-limit', '5']);
      expect(set.code, set.stderr).toBe(0);
      const reshown = await cli(['--json', 'org', 'show', 'Acme']);
      expect(reshown.code, reshown.stderr).toBe(0);
      expect(JSON.parse(reshown.stdout)).toMatchObject({ name: 'Acme', alert_rule_limit: 5 });

      // The server side sees the same organization.
      expect((await t.container.organizations.showByName('Acme')).alert_rule_limit).toBe(5);
    },
    CLI_TEST_MS,
  );

  it(
    'org show of an unknown organization fails with a message on stderr',
    async () => {
      const result = await cli(['org', 'show', 'No Such Org']);
      expect(result.code).not.toBe(0);
      expect(result.stderr).toMatch(/not found/);
      expect(result.stdout).toBe('');
    },
    CLI_TEST_MS,
  );

  it(
    'user create --password-stdin creates the user and its organization; the password logs in',
    async () => {
      const password = 'piped in through stdin 7';
      const created = await cli(
        ['user', 'create', '--org', 'NewOrg', '--email', 'x@y.test', '--password-stdin'],
        `${password}\n`,
      );
      expect(created.code, created.stderr).toBe(0);
      expect(created.stdout).toContain('x@y.test');

      const listed = await cli(['--json', 'user', 'list']);
      expect(listed.code, listed.stderr).toBe(0);
      const users = JSON.parse(listed.stdout) as Record<string, unknown>[];
      expect(users.find((u) => u.email === 'x@y.test')).toMatchObject({
        organization: 'NewOrg',
        role: 'member',
        is_active: true,
        two_factor_enabled: false,
      });
      expect(users.every((u) => !('password_hash' in u))).toBe(true);

      expect((await t.container.organizations.showByName('NewOrg')).name).toBe('NewOrg');
      // The trailing newline of the piped input is not part of the password.
      expect(await loginStatus('x@y.test', password)).toBe(200);
    },
    CLI_TEST_MS,
  );

  it(
    'user disable stops logins and live tokens at once',
    async () => {
      await t.createUser({ org: 'Leavers', email: 'leaver@acme.test' });
      const { access } = await t.login('leaver@acme.test');

      const disabled = await cli(['user', 'disable', 'leaver@acme.test']);
      expect(disabled.code, disabled.stderr).toBe(0);

      expectError(
        await t.request({
          method: 'POST',
          url: '/token/',
          body: { email: 'leaver@acme.test', password: DEFAULT_PASSWORD },
        }),
        401,
      );
      expectError(await t.request({ method: 'GET', url: '/service/account/', token: access }), 401);
    },
    CLI_TEST_MS,
  );

  it(
    'creating a user that exists fails with a non-zero exit and an error on stderr',
    async () => {
      await t.createUser({ org: 'Dups', email: 'dup@acme.test' });
      const result = await cli(
        ['user', 'create', '--org', 'Dups', '--email', 'DUP@acme.test', '--password-stdin'],
        'another long password 1\n',
      );
      expect(result.code).not.toBe(0);
      expect(result.stderr).toMatch(/^error: .*already exists/m);
      expect(result.stdout).toBe('');
      // The existing account is untouched.
      expect(await loginStatus('dup@acme.test', DEFAULT_PASSWORD)).toBe(200);
    },
    CLI_TEST_MS,
  );

  it(
    'demo prints credentials that log in; running it again replaces the password',
    async () => {
      const parse = (stdout: string) => ({
        email: /^Email:\s+(\S+)$/m.exec(stdout)?.[1],
        password: /^Password:\s+(\S+)$/m.exec(stdout)?.[1],
      });

      const first = await cli(['demo']);
      expect(first.code, first.stderr).toBe(0);
      const one = parse(first.stdout);
      expect(one.email).toBe('demo@dragnet.local');
      expect(one.password).toEqual(expect.any(String));
      expect(await loginStatus(one.email!, one.password!)).toBe(200);

      const second = await cli(['demo']);
      expect(second.code, second.stderr).toBe(0);
      const two = parse(second.stdout);
      expect(two.password).not.toBe(one.password);
      expect(await loginStatus(two.email!, two.password!)).toBe(200);
      expect(await loginStatus(one.email!, one.password!)).toBe(401);
    },
    CLI_TEST_MS,
  );
});

describe('dragnet migrate', () => {
  let location: TestStoreLocation;
  beforeAll(async () => {
    location = await createTestStoreLocation();
  });
  afterAll(() => location.drop());

  it(
    `migrates a fresh ${testEngine} store once, then has nothing to do`,
    async () => {
      const first = await runCli(['--json', 'migrate'], { env: location.env });
      expect(first.code, first.stderr).toBe(0);
      const applied = JSON.parse(first.stdout);
      expect(applied.store).toBe(testEngine);
      expect(applied.applied).toContain('0001_trunk');

      const again = await runCli(['--json', 'migrate'], { env: location.env });
      expect(again.code, again.stderr).toBe(0);
      expect(JSON.parse(again.stdout)).toEqual({ applied: [], store: testEngine });

      const text = await runCli(['migrate'], { env: location.env });
      expect(text.code, text.stderr).toBe(0);
      expect(text.stdout).toMatch(/up to date/);
    },
    CLI_TEST_MS,
  );
});
