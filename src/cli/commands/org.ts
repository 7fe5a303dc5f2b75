import { InvalidArgumentError, type Command } from 'commander';
import type { OrganizationSettings } from '../../modules/orgs/index.ts';
import { wholeNumber } from '../arguments.ts';
import type { CliContext } from '../cli-context.ts';
import { keyValues, table } from '../output.ts';

const orgSettingOptions = (command: Command) =>
  command
    .option('--alert-rule-limit <n>', 'maximum active monitoring rules', wholeNumber)
    .option('--default-frequency <f>', 'frequency of rules that name none (daily, weekly, monthly, …)')
    .option('--dashboard-url <url>', 'base URL of links in notifications')
    .option('--managed-by <org>', 'the MSSP organization that manages this one');

const settingsFrom = (options: Record<string, unknown>): OrganizationSettings => ({
  alertRuleLimit: options.alertRuleLimit as number | undefined,
  defaultFrequency: options.defaultFrequency as string | undefined,
  dashboardUrl: options.dashboardUrl as string | undefined,
  managedBy: options.managedBy === false ? null : (options.managedBy as string | undefined),
  rename: options.rename as string | undefined,
});

const orgColumns = [
  'id',
  'name',
  'alert_rule_limit',
  'used_credits',
  'default_frequency',
  'managed_by_org_id',
  'dashboard_url',
];

type LimitValue = number | 'none' | 'default';

// 'none' stays a string here: commander turns a parser's null into ''.
const limitValue = (value: string): LimitValue =>
  value === 'none' || value === 'default' ? value : wholeNumber(value);
const toLimit = (value: LimitValue): number | null | 'default' => (value === 'none' ? null : value);

const collectServiceLimit = (value: string, previous: [string, LimitValue][] = []) => {
  const match = /^([\w-]+)=(.+)$/.exec(value);
  if (!match) throw new InvalidArgumentError('expected <service-slug>=<daily limit|none|default>');
  return [...previous, [match[1]!, limitValue(match[2]!)] as [string, LimitValue]];
};

export function registerOrgCommands(program: Command, cli: CliContext): void {
  const org = program.command('org').description('manage organizations');

  orgSettingOptions(org.command('create <name>').description('create an organization')).action(
    async (name: string, options) => {
      await cli.withContainer(async ({ organizations }, out) => {
        const created = await organizations.create(name, settingsFrom(options));
        out.emit(created, () => `created organization ${created.name} (id ${created.id})`);
      });
    },
  );

  org
    .command('list')
    .description('list organizations')
    .action(async () => {
      await cli.withContainer(async ({ organizations }, out) => {
        const rows = await organizations.list();
        out.emit(rows, () => table(rows as never, orgColumns));
      });
    });

  org
    .command('show <name>')
    .description('show one organization')
    .action(async (name: string) => {
      await cli.withContainer(async ({ organizations }, out) => {
        const shown = await organizations.showByName(name);
        out.emit(shown, () => keyValues(shown as never));
      });
    });

  orgSettingOptions(org.command('set <name>').description("change an organization's settings"))
    .option('--no-managed-by', 'detach from its MSSP')
    .option('--rename <new-name>', 'rename the organization')
    .action(async (name: string, options) => {
      await cli.withContainer(async ({ organizations }, out) => {
        const updated = await organizations.update(name, settingsFrom(options));
        out.emit(updated, () => keyValues(updated as never));
      });
    });

  org
    .command('set-limits <name>')
    .description('override rate limits of an organization (a number, "none" for unlimited, or "default")')
    .option('--per-second <n>', 'account-wide requests per second (default 25)', limitValue)
    .option('--per-month <n>', 'account-wide requests per calendar month (default 100000)', limitValue)
    .option(
      '--service <slug=n>',
      "an endpoint's daily limit, e.g. messenger-search-create=3 (repeatable)",
      collectServiceLimit,
    )
    .option('--reset', 'drop every override first')
    .action(async (name: string, options) => {
      const { ACCOUNT_SCOPE, serviceScope } = await import('../../modules/usage/index.ts');
      await cli.withContainer(async ({ organizations, limits }, out) => {
        const target = await organizations.requireByName(name);
        if (options.reset) await limits.clearOverrides(target.id);
        if (options.perSecond !== undefined)
          await limits.setOverride(target.id, ACCOUNT_SCOPE, 'second', toLimit(options.perSecond));
        if (options.perMonth !== undefined)
          await limits.setOverride(target.id, ACCOUNT_SCOPE, 'month', toLimit(options.perMonth));
        for (const [slug, value] of (options.service ?? []) as [string, LimitValue][]) {
          await limits.setOverride(target.id, serviceScope(slug), 'day', toLimit(value));
        }
        const overrides = await limits.listOverrides(target.id);
        out.emit({ organization: target.name, overrides }, () =>
          overrides.length
            ? table(
                overrides.map((o) => ({ ...o, limit_value: o.limit_value ?? 'none' })),
                ['scope', 'period', 'limit_value'],
              )
            : `${target.name} uses the default limits`,
        );
      });
    });
}
