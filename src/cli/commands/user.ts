import type { Command } from 'commander';
import { cliOrigin, userTarget } from '../../modules/audit/index.ts';
import type { CliContext } from '../cli-context.ts';
import { table } from '../output.ts';
import { resolvePassword } from '../password-input.ts';

const userColumns = ['id', 'email', 'organization', 'role', 'is_active', 'two_factor_enabled', 'last_login_at'];

export function registerUserCommands(program: Command, cli: CliContext): void {
  const user = program.command('user').description('manage users');

  user
    .command('create')
    .description('create a user (and its organization when it does not exist)')
    .requiredOption('--org <name>', 'organization name')
    .requiredOption('--email <email>', 'login email')
    .option('--password <password>', 'password (prefer --password-stdin or the prompt)')
    .option('--password-stdin', 'read the password from standard input')
    .option('--system', 'an operator account that can act for every organization')
    .action(async (options) => {
      const password = await resolvePassword(options);
      await cli.withContainer(async ({ users, audit }, out) => {
        const created = await users.create({
          orgName: options.org,
          email: options.email,
          password,
          role: options.system ? 'system' : 'member',
        });
        await audit.record({
          ...cliOrigin(created.org_id),
          event: 'user.created',
          target: userTarget(created),
          details: { role: created.role },
        });
        out.emit(created, () => `created user ${created.email} in ${created.organization} (id ${created.id})`);
      });
    });

  user
    .command('list')
    .description('list users')
    .option('--org <name>', 'only this organization')
    .action(async (options) => {
      await cli.withContainer(async ({ users }, out) => {
        const rows = await users.list(options.org);
        out.emit(rows, () => table(rows as never, userColumns));
      });
    });

  user
    .command('disable <email>')
    .description('disable a user; their tokens stop working at once')
    .action(async (email: string) => {
      await cli.withContainer(async ({ users, audit }, out) => {
        const disabled = await users.setActive(email, false);
        await audit.record({ ...cliOrigin(disabled.org_id), event: 'user.disabled', target: userTarget(disabled) });
        out.emit(disabled, () => `disabled ${disabled.email}`);
      });
    });

  user
    .command('enable <email>')
    .description('re-enable a disabled user')
    .action(async (email: string) => {
      await cli.withContainer(async ({ users, audit }, out) => {
        const enabled = await users.setActive(email, true);
        await audit.record({ ...cliOrigin(enabled.org_id), event: 'user.enabled', target: userTarget(enabled) });
        out.emit(enabled, () => `enabled ${enabled.email}`);
      });
    });

  user
    .command('disable-2fa <email>')
    .description('turn off two-factor authentication of a user who lost their authenticator and backup codes')
    .action(async (email: string) => {
      await cli.withContainer(async ({ users, audit }, out) => {
        const changed = await users.disableTwoFactor(email);
        await audit.record({ ...cliOrigin(changed.org_id), event: 'two_factor.disabled', target: userTarget(changed) });
        out.emit(
          changed,
          () => `two-factor authentication is off for ${changed.email}; they can enrol again with setup_2fa`,
        );
      });
    });
}
