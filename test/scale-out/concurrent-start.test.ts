import { afterEach, describe, expect, it } from 'vitest';
import { spawnCli } from '../support/cli-process.ts';
import { createTestApp } from '../support/test-app.ts';
import { createTestStoreLocation, testEngine, type TestStoreLocation } from '../support/test-store.ts';
import { scaled } from '../support/wait.ts';

const PROCESSES = 4;
const SLOW_MS = scaled(240_000);
const PASSWORD = 'a long enough password for four processes';

/**
 * Several processes starting at once on a fresh store, as a scale-out deployment (or `npm start`
 * beside `dragnet worker`) does on its first start or after an upgrade: one applies the
 * migrations while the others wait, and whatever each creates when missing (the organization
 * of `user create --org`, the operator's system sender) exists once.
 */
describe(`processes starting at once on a fresh store (${testEngine})`, () => {
  let location: TestStoreLocation | undefined;
  afterEach(async () => {
    await location?.drop();
    location = undefined;
  });

  const together = async (argsOf: (i: number) => string[], env: Record<string, string>) => {
    const processes = Array.from({ length: PROCESSES }, (_, i) => spawnCli(argsOf(i), { env, timeoutMs: SLOW_MS }));
    const results = await Promise.all(processes.map((p) => p.done));
    for (const result of results) expect(result.code, result.stderr).toBe(0);
    return results;
  };

  it(
    'one process applies the migrations, the others wait for it and find nothing to do',
    async () => {
      location = await createTestStoreLocation();
      const results = await together(() => ['--json', 'migrate'], location.env);
      const applied = results.map((r) => (JSON.parse(r.stdout) as { applied: string[] }).applied);
      const migrators = applied.filter((names) => names.length > 0);
      expect(migrators).toHaveLength(1);
      expect(migrators[0]).toContain('0001_trunk');
      expect(applied.filter((names) => names.length === 0)).toHaveLength(PROCESSES - 1);
    },
    SLOW_MS,
  );

  it(
    'users created at once in a new organization share one organization, and the system sender exists once',
    async () => {
      location = await createTestStoreLocation();
      const env = {
        ...location.env,
        DRAGNET_SYSTEM_SMTP_URL: 'smtp://127.0.0.1:2525?from=alerts@dragnet.test&encryption=SSL',
      };
      await together(
        (i) => ['--json', 'user', 'create', '--org', 'Acme', '--email', `user${i}@acme.test`, '--password', PASSWORD],
        env,
      );
      const t = await createTestApp({ location, env });
      try {
        const organizations = (await t.container.organizations.list()).filter((org) => org.name === 'Acme');
        expect(organizations).toHaveLength(1);
        expect((await t.container.users.list('Acme')).map((u) => u.email).sort()).toEqual(
          Array.from({ length: PROCESSES }, (_, i) => `user${i}@acme.test`),
        );
        const { access } = await t.login('user0@acme.test', PASSWORD);
        const senders = await t.request({
          method: 'GET',
          url: '/service/alert_system_setting_get_sender_list/',
          token: access,
        });
        expect(senders.statusCode).toBe(200);
        const system = (senders.json() as { results: { is_system_created: boolean; email: string }[] }).results.filter(
          (s) => s.is_system_created,
        );
        expect(system).toEqual([expect.objectContaining({ email: 'alerts@dragnet.test' })]);
      } finally {
        await t.close();
      }
    },
    SLOW_MS,
  );
});
