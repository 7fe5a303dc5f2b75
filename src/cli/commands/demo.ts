import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import type { CliContext } from '../cli-context.ts';

const DEMO_ORG = 'Demo Org';
const DEMO_EMAIL = 'demo@dragnet.local';

export function registerDemoCommand(program: Command, cli: CliContext): void {
  program
    .command('demo')
    .description('create a demo organization and user, and print the credentials')
    .action(async () => {
      await cli.withContainer(async (container, out) => {
        const { organizations, users, config } = container;
        // A fresh password on every run, so a demo account never has a well-known password.
        let password = randomBytes(12).toString('base64url');
        // The strength rule refuses a password holding the email's local part ("demo").
        while (password.toLowerCase().includes('demo')) password = randomBytes(12).toString('base64url');
        await organizations.ensure(DEMO_ORG);
        const existing = (await users.list(DEMO_ORG)).find((u) => u.email === DEMO_EMAIL);
        if (existing) await users.resetPassword(DEMO_EMAIL, password);
        else await users.create({ orgName: DEMO_ORG, email: DEMO_EMAIL, password });
        const loaded: string[] = [];
        for (const source of (await cli.loadSources()).sourceCatalog) {
          if (source.demo) loaded.push(await source.demo(container.sourceContext, Date.now()));
        }
        const base = `http://${config.host}:${config.port}`;
        out.emit(
          { organization: DEMO_ORG, email: DEMO_EMAIL, password, login_url: `${base}/token/`, demo_data: loaded },
          () =>
            [
              `Demo organization: ${DEMO_ORG}`,
              `Email:    ${DEMO_EMAIL}`,
              `Password: ${password}`,
              ...loaded,
              `Log in:   curl -s -X POST ${base}/token/ -H 'content-type: application/json' -d '{"email":"${DEMO_EMAIL}","password":"${password}"}'`,
            ].join('\n'),
        );
      });
    });
}
