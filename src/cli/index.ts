import { randomBytes } from 'node:crypto';
import { Command, InvalidArgumentError, Option } from 'commander';
import { loadConfig, type Config } from '../config.ts';
import type { Container } from '../container.ts';
import { AppError } from '../lib/errors.ts';
import { stderrLog } from '../lib/log.ts';
import { cliOrigin, userTarget } from '../modules/audit/index.ts';
import type { OrganizationSettings } from '../modules/orgs/index.ts';
import { createOutput, keyValues, table, type Output } from './output.ts';
import { resolveBackupKey, resolvePassword, type BackupKeyOptions } from './password-input.ts';
import { createIngestProgress } from './ingest-progress.ts';

// Everything a dragnet process creates (the store and its -wal/-shm, keys, raw leak files, the
// inbox, backups) is its owner's alone, whatever the service manager's umask.
process.umask(0o077);

// A command imports the modules it runs when it runs: loading every module and its libraries
// took most of a second, which `dragnet --help` or `dragnet user list` should not pay. The
// ingest command lists its targets in its help, so the source catalog is loaded up front for
// that command alone.
const sources = process.argv.includes('ingest') ? await import('../modules/sources/index.ts') : null;
const loadSources = async () => sources ?? import('../modules/sources/index.ts');
const loadContainer = async (config: Config) => (await import('../container.ts')).createContainer(config);

const DEMO_ORG = 'Demo Org';
const DEMO_EMAIL = 'demo@dragnet.local';

const wholeNumber = (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('must be a whole number');
  return n;
};

const program = new Command('dragnet')
  .description('Dragnet threat-intelligence search and monitoring')
  .option('--json', 'print machine-readable JSON')
  .showHelpAfterError();

/** Opens the store (migrating it), runs the action, and always closes the store. */
async function withContainer(action: (container: Container, out: Output) => Promise<void>): Promise<void> {
  const container = await loadContainer(loadConfig());
  try {
    await action(container, createOutput(Boolean(program.opts().json)));
  } finally {
    await container.close();
  }
}

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

const orgColumns = ['id', 'name', 'alert_rule_limit', 'used_credits', 'default_frequency', 'managed_by_org_id', 'dashboard_url'];
const userColumns = ['id', 'email', 'organization', 'role', 'is_active', 'two_factor_enabled', 'last_login_at'];

program
  .command('serve')
  .description('run the API server with the scheduler and workers (the same as npm start)')
  .option('--no-worker', 'API only: leave rule evaluation and deliveries to other processes')
  .action(async (options) => {
    // Loaded only here: every other command stays free of the HTTP stack's start-up cost.
    const { serve } = await import('../main.ts');
    await serve(loadConfig(), { withWorker: options.worker });
  });

program
  .command('worker')
  .description('run only the scheduler and workers (rule evaluation, async jobs, notifications)')
  .addOption(
    new Option('--metrics-port <port>', 'serve /metrics, /healthz and /readyz on HOST:<port>')
      .env('DRAGNET_WORKER_METRICS_PORT')
      .argParser(wholeNumber),
  )
  .action(async (options: { metricsPort?: number }) => {
    const config = loadConfig();
    const container = await loadContainer(config);
    const { startScheduler } = await import('../modules/rules/index.ts');
    const log = stderrLog;
    // Listening first: a port in use fails the command before any work starts. Loaded only
    // here, as in serve: a worker without the port needs no HTTP stack.
    const operations = options.metricsPort === undefined ? null : await (await import('../operations-server.ts')).startOperationsServer(container, { host: config.host, port: options.metricsPort });
    const scheduler = startScheduler(container, { pollMs: config.schedulerPollMs, log });
    const collectors = container.collectors.start({ pollMs: config.schedulerPollMs, log });
    process.stdout.write(`Dragnet worker running (store: ${container.store.engine})${operations ? `; metrics on ${operations.url}/metrics` : ''}\n`);
    for (const warning of await (await import('../db/maintenance.ts')).autovacuumWarnings(container.store)) log(`warning: ${warning}`);
    const stop = async () => {
      await operations?.close();
      await collectors.stop();
      await scheduler.stop();
      await container.close();
      process.exit(0);
    };
    // A shutdown that fails half-way must still end the process, and say why.
    const stopOrExit = () => {
      stop().catch((error: unknown) => {
        process.stderr.write(`worker shutdown failed: ${(error as Error).message}\n`);
        process.exit(1);
      });
    };
    process.once('SIGTERM', stopOrExit);
    process.once('SIGINT', stopOrExit);
  });

program
  .command('migrate')
  .description('apply pending store migrations')
  .action(async () => {
    const config = loadConfig();
    const [{ openStore }, { migrateToLatest }, { createKeyRing }] = await Promise.all([import('../db/store.ts'), import('../db/migrate.ts'), import('../lib/crypto.ts')]);
    const store = openStore({ dataDir: config.dataDir, databaseUrl: config.databaseUrl, busyTimeoutMs: config.sqliteBusyTimeoutMs });
    try {
      const applied = await migrateToLatest(store, createKeyRing(config.masterKey, config.cardHashKey));
      createOutput(Boolean(program.opts().json)).emit({ applied, store: store.engine }, () =>
        applied.length ? `applied: ${applied.join(', ')}` : 'store is up to date',
      );
    } finally {
      await store.close();
    }
  });

const org = program.command('org').description('manage organizations');

orgSettingOptions(org.command('create <name>').description('create an organization')).action(async (name: string, options) => {
  await withContainer(async ({ organizations }, out) => {
    const created = await organizations.create(name, settingsFrom(options));
    out.emit(created, () => `created organization ${created.name} (id ${created.id})`);
  });
});

org
  .command('list')
  .description('list organizations')
  .action(async () => {
    await withContainer(async ({ organizations }, out) => {
      const rows = await organizations.list();
      out.emit(rows, () => table(rows as never, orgColumns));
    });
  });

org
  .command('show <name>')
  .description('show one organization')
  .action(async (name: string) => {
    await withContainer(async ({ organizations }, out) => {
      const shown = await organizations.showByName(name);
      out.emit(shown, () => keyValues(shown as never));
    });
  });

orgSettingOptions(org.command('set <name>').description("change an organization's settings"))
  .option('--no-managed-by', 'detach from its MSSP')
  .option('--rename <new-name>', 'rename the organization')
  .action(async (name: string, options) => {
    await withContainer(async ({ organizations }, out) => {
      const updated = await organizations.update(name, settingsFrom(options));
      out.emit(updated, () => keyValues(updated as never));
    });
  });

type LimitValue = number | 'none' | 'default';

// 'none' stays a string here: commander turns a parser's null into ''.
const limitValue = (value: string): LimitValue => (value === 'none' || value === 'default' ? value : wholeNumber(value));
const toLimit = (value: LimitValue): number | null | 'default' => (value === 'none' ? null : value);

const collectServiceLimit = (value: string, previous: [string, LimitValue][] = []) => {
  const match = /^([\w-]+)=(.+)$/.exec(value);
  if (!match) throw new InvalidArgumentError('expected <service-slug>=<daily limit|none|default>');
  return [...previous, [match[1]!, limitValue(match[2]!)] as [string, LimitValue]];
};

org
  .command('set-limits <name>')
  .description('override rate limits of an organization (a number, "none" for unlimited, or "default")')
  .option('--per-second <n>', 'account-wide requests per second (default 25)', limitValue)
  .option('--per-month <n>', 'account-wide requests per calendar month (default 100000)', limitValue)
  .option('--service <slug=n>', "an endpoint's daily limit, e.g. messenger-search-create=3 (repeatable)", collectServiceLimit)
  .option('--reset', 'drop every override first')
  .action(async (name: string, options) => {
    const { ACCOUNT_SCOPE, serviceScope } = await import('../modules/usage/index.ts');
    await withContainer(async ({ organizations, limits }, out) => {
      const target = await organizations.requireByName(name);
      if (options.reset) await limits.clearOverrides(target.id);
      if (options.perSecond !== undefined) await limits.setOverride(target.id, ACCOUNT_SCOPE, 'second', toLimit(options.perSecond));
      if (options.perMonth !== undefined) await limits.setOverride(target.id, ACCOUNT_SCOPE, 'month', toLimit(options.perMonth));
      for (const [slug, value] of (options.service ?? []) as [string, LimitValue][]) {
        await limits.setOverride(target.id, serviceScope(slug), 'day', toLimit(value));
      }
      const overrides = await limits.listOverrides(target.id);
      out.emit({ organization: target.name, overrides }, () =>
        overrides.length
          ? table(overrides.map((o) => ({ ...o, limit_value: o.limit_value ?? 'none' })), ['scope', 'period', 'limit_value'])
          : `${target.name} uses the default limits`,
      );
    });
  });

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
    await withContainer(async ({ users, audit }, out) => {
      const created = await users.create({
        orgName: options.org,
        email: options.email,
        password,
        role: options.system ? 'system' : 'member',
      });
      await audit.record({ ...cliOrigin(created.org_id), event: 'user.created', target: userTarget(created), details: { role: created.role } });
      out.emit(created, () => `created user ${created.email} in ${created.organization} (id ${created.id})`);
    });
  });

user
  .command('list')
  .description('list users')
  .option('--org <name>', 'only this organization')
  .action(async (options) => {
    await withContainer(async ({ users }, out) => {
      const rows = await users.list(options.org);
      out.emit(rows, () => table(rows as never, userColumns));
    });
  });

user
  .command('disable <email>')
  .description('disable a user; their tokens stop working at once')
  .action(async (email: string) => {
    await withContainer(async ({ users, audit }, out) => {
      const disabled = await users.setActive(email, false);
      await audit.record({ ...cliOrigin(disabled.org_id), event: 'user.disabled', target: userTarget(disabled) });
      out.emit(disabled, () => `disabled ${disabled.email}`);
    });
  });

user
  .command('enable <email>')
  .description('re-enable a disabled user')
  .action(async (email: string) => {
    await withContainer(async ({ users, audit }, out) => {
      const enabled = await users.setActive(email, true);
      await audit.record({ ...cliOrigin(enabled.org_id), event: 'user.enabled', target: userTarget(enabled) });
      out.emit(enabled, () => `enabled ${enabled.email}`);
    });
  });

user
  .command('disable-2fa <email>')
  .description('turn off two-factor authentication of a user who lost their authenticator and backup codes')
  .action(async (email: string) => {
    await withContainer(async ({ users, audit }, out) => {
      const changed = await users.disableTwoFactor(email);
      await audit.record({ ...cliOrigin(changed.org_id), event: 'two_factor.disabled', target: userTarget(changed) });
      out.emit(changed, () => `two-factor authentication is off for ${changed.email}; they can enrol again with setup_2fa`);
    });
  });

/** How backups are encrypted and decrypted (docs/operations.md "Backups"). */
const backupKeyOptions = (command: Command) =>
  command
    .addOption(new Option('--key-file <file>', 'an age key file (age-keygen): its identity, or for a backup only its recipient (age1…)').env('DRAGNET_BACKUP_KEY_FILE'))
    .addOption(new Option('--passphrase-file <file>', 'the passphrase: the first line of this file').env('DRAGNET_BACKUP_PASSPHRASE_FILE'))
    .option('--passphrase-stdin', 'read the passphrase from standard input');

backupKeyOptions(
  program
    .command('backup <file>')
    .description('write the store (SQLite online backup, or pg_dump) and the data files a restore needs into one age-encrypted tar archive'),
).action(async (file: string, options: BackupKeyOptions) => {
  const config = loadConfig();
  const { backupStore } = await import('../db/backup.ts');
  const summary = await backupStore(config, file, await resolveBackupKey(options, 'backup'));
  createOutput(Boolean(program.opts().json)).emit({ file, ...summary }, () => `backed up the ${summary.engine} store to ${file} (${summary.bytes} bytes: ${summary.files.join(', ')})`);
});

backupKeyOptions(
  program
    .command('restore <file>')
    .description('restore a backup into the configured store (a fresh data folder or database); stop every dragnet process of the store first')
    .option('--force', 'replace a store that already holds data'),
).action(async (file: string, options: BackupKeyOptions & { force?: boolean }) => {
  const config = loadConfig();
  const [{ restoreStore }, { createKeyRing }] = await Promise.all([import('../db/backup.ts'), import('../lib/crypto.ts')]);
  const summary = await restoreStore(config, file, {
    force: Boolean(options.force),
    key: await resolveBackupKey(options, 'restore'),
    // The backup's secret.key replaces the data folder's: read the keys again after it.
    keys: () => {
      const restored = loadConfig();
      return createKeyRing(restored.masterKey, restored.cardHashKey);
    },
  });
  createOutput(Boolean(program.opts().json)).emit({ file, ...summary }, () =>
    `restored the ${summary.engine} store from ${file} (${summary.files.join(', ')})${summary.applied.length ? `; migrated: ${summary.applied.join(', ')}` : ''}`,
  );
  if (summary.card_key === 'different') {
    process.stderr.write(
      'warning: this data folder\'s card hash key (card-hash.key or DRAGNET_CARD_HASH_KEY) is not the one the backup\'s cards were stored with: cards ingested again are stored again, and 7- or 8-digit BIN rules miss the restored cards. Put the old key in place before dragnet starts again (docs/operations.md "Card hash key").\n',
    );
  }
});

const rulesCommand = program.command('rules').description('monitoring rules');

rulesCommand
  .command('tick')
  .description('evaluate due rules now, then run async jobs and deliver pending notifications')
  .option('--at <time>', 'evaluate as of this ISO 8601 time instead of now')
  .action(async (options) => {
    const at = options.at ? new Date(options.at) : new Date();
    if (Number.isNaN(at.getTime())) throw new AppError('validation_failed', '--at must be an ISO 8601 time');
    await withContainer(async (container, out) => {
      const report = await container.runner.tick(at);
      let jobsRun = 0;
      let delivered = 0;
      for (let n; (n = await container.jobs.runDue()) > 0; ) jobsRun += n;
      for (let n; (n = await container.notifier.dispatchPending()) > 0; ) delivered += n;
      const summary = { at: at.toISOString(), ...report, jobs_run: jobsRun, notifications_handled: delivered };
      out.emit(summary, () =>
        `tick at ${summary.at}: ${report.due} due, ${report.ran} ran, ${report.skipped} already done, ${report.matches} new matches; ${jobsRun} jobs, ${delivered} notifications`,
      );
    });
  });

program
  .command('ingest <target> <inputs...>')
  .description("load data into a source's store (dragnet ingest --help lists the targets)")
  .addHelpText('after', () => ['', 'Targets:', ...(sources?.listIngesters() ?? []).map((i) => `  ${i.name.padEnd(20)} ${i.description} (formats: ${i.formats.join(', ')})`)].join('\n'))
  .option('--format <format>', "input format (default: the target's first format, usually auto)")
  .option('--category <name>', 'messenger: category of channels whose records name none')
  .action(async (target: string, inputs: string[], options) => {
    const { findIngester, listIngesters } = await loadSources();
    const ingester = findIngester(target);
    if (!ingester) throw new AppError('validation_failed', `unknown ingest target ${target}; one of: ${listIngesters().map((i) => i.name).join(', ')}`);
    const format = (options.format as string | undefined) ?? ingester.formats[0]!;
    if (!ingester.formats.includes(format)) throw new AppError('validation_failed', `--format must be one of: ${ingester.formats.join(', ')}`);
    await withContainer(async (container, out) => {
      const report = await ingester.run(container.sourceContext, inputs, { format, category: options.category, progress: createIngestProgress(out.json) });
      out.emit(report.summary, () => report.lines.join('\n'));
      if (report.failed) process.exitCode = 1;
    });
  });

const collectorsCommand = program
  .command('collectors')
  .description('collectors: schedule, cursor and health (docs/collectors.md); `collectors run <name>` runs one now')
  .action(async () => {
    await withContainer(async (container, out) => {
      const status = await container.collectors.status();
      const when = (iso: string | null) => iso ?? '-';
      out.emit(status, () =>
        table(
          status.map((c) => ({
            name: c.name,
            source: c.source ?? '(all)',
            enabled: c.enabled ? 'yes' : 'no',
            every: `${c.interval_seconds}s`,
            'last success': when(c.last_success_at),
            'last error': c.last_error ? `${when(c.last_error_at)} ${c.last_error}${c.consecutive_failures > 1 ? ` (${c.consecutive_failures} in a row)` : ''}` : '-',
            'items last/total': `${c.items_last_run ?? '-'}/${c.items_total}`,
            'next run': c.running ? 'running' : when(c.next_run_at),
          })),
          ['name', 'source', 'enabled', 'every', 'last success', 'last error', 'items last/total', 'next run'],
        ),
      );
    });
  });

collectorsCommand
  .command('run <names...>')
  .description('run the named collectors once now, whatever their schedule (exit 1 when one fails)')
  .action(async (names: string[]) => {
    await withContainer(async (container, out) => {
      const reports = await container.collectors.runNow(names);
      out.emit(reports, () =>
        reports.map((r) => `${r.name}: ${r.outcome === 'ran' ? `${r.items} items stored` : r.outcome === 'busy' ? 'already running in another process' : `${r.outcome}: ${r.error ?? ''}`}`).join('\n'),
      );
      if (reports.some((r) => r.outcome !== 'ran')) process.exitCode = 1;
    });
  });

program
  .command('demo')
  .description('create a demo organization and user, and print the credentials')
  .action(async () => {
    await withContainer(async (container, out) => {
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
      for (const source of (await loadSources()).sourceCatalog) {
        if (source.demo) loaded.push(await source.demo(container.sourceContext, Date.now()));
      }
      const base = `http://${config.host}:${config.port}`;
      out.emit({ organization: DEMO_ORG, email: DEMO_EMAIL, password, login_url: `${base}/token/`, demo_data: loaded }, () =>
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

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof AppError) {
    const fields = error.fields?.length ? ` (${error.fields.map((f) => f.field).join(', ')})` : '';
    process.stderr.write(`error: ${error.message}${fields}\n`);
    process.exitCode = error.code === 'not_found' ? 3 : error.code === 'conflict' ? 4 : 1;
  } else {
    process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  }
}
