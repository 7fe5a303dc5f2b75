/**
 * `npm run bench -- fuzz [--cases n] [--seed n] [--concurrency n] [--store sqlite|postgres|both] [--admin-url url]`
 *
 * The OpenAPI fuzz of test/fuzz.test.ts at full size (issue #15): `--cases` cases per store
 * (10,000 by default), drawn with fast-check from the document of a real listening server on a
 * fresh, seeded store, sent `--concurrency` at a time. Prints per store the cases run, the
 * answers by status, the 5xx, the dropped connections and the errors without the error body,
 * with the first findings replayable from their line. Exit code 1 on any finding.
 * PostgreSQL runs with `--store postgres|both`, or by default when DRAGNET_TEST_DATABASE_URL
 * (or DRAGNET_BENCH_DATABASE_URL) names a server.
 */
import { Command, Option } from 'commander';
import { runFuzz, startFuzzTarget, type FuzzReport } from '../test/support/openapi-fuzz.ts';
import { positive } from './support/options.ts';
import { DEFAULT_POSTGRES_ADMIN_URL } from './support/store.ts';

interface FuzzBenchOptions {
  cases: number;
  seed: number;
  concurrency: number;
  store?: 'sqlite' | 'postgres' | 'both';
  adminUrl?: string;
}

const SHOWN_FINDINGS = 20;

function parseOptions(args: string[]): FuzzBenchOptions {
  const program = new Command('npm run bench -- fuzz')
    .description('fuzz every operation of the OpenAPI document over a real socket, per store')
    .option('--cases <n>', 'cases per store', positive('--cases', true, 10_000_000), 10_000)
    .option(
      '--seed <n>',
      'fast-check seed (the same seed draws the same cases)',
      positive('--seed', true, 2 ** 31 - 1),
      1,
    )
    .option('--concurrency <n>', 'requests in flight', positive('--concurrency', true, 64), 4)
    .addOption(
      new Option('--store <engine>', 'which stores (default: sqlite, and postgres when a server is named)').choices([
        'sqlite',
        'postgres',
        'both',
      ]),
    )
    .option(
      '--admin-url <url>',
      `PostgreSQL admin connection (a fresh database is created and dropped; default ${DEFAULT_POSTGRES_ADMIN_URL} when --store asks for it)`,
    )
    .exitOverride((error) => process.exit(error.exitCode === 0 ? 0 : 2))
    .allowExcessArguments(false);
  program.parse(args, { from: 'user' });
  return program.opts<FuzzBenchOptions>();
}

function print(label: string, report: FuzzReport, seconds: number): void {
  const statuses = [...report.byStatus].sort(([a], [b]) => a - b).map(([status, count]) => `${status}: ${count}`);
  const lines = [
    `${label}: ${report.cases} cases in ${seconds.toFixed(1)} s (${Math.round(report.cases / seconds)}/s)`,
    `  by status: ${statuses.join(', ')}`,
    `  5xx: ${report.serverErrors.length}   dropped connections: ${report.dropped.length}   errors without the error body: ${report.unshapedErrors.length}`,
  ];
  const findings = [...report.serverErrors, ...report.dropped, ...report.unshapedErrors];
  for (const finding of findings.slice(0, SHOWN_FINDINGS)) lines.push(`  - ${finding}`);
  if (findings.length > SHOWN_FINDINGS) lines.push(`  … and ${findings.length - SHOWN_FINDINGS} more`);
  process.stdout.write(lines.join('\n') + '\n');
}

export async function run(args: string[]): Promise<void> {
  const options = parseOptions(args);
  const namedServer =
    options.adminUrl ?? (process.env.DRAGNET_BENCH_DATABASE_URL || process.env.DRAGNET_TEST_DATABASE_URL || undefined);
  const store = options.store ?? (namedServer ? 'both' : 'sqlite');
  const adminUrl = namedServer ?? DEFAULT_POSTGRES_ADMIN_URL;
  const stores: { label: string; adminUrl?: string }[] = [
    ...(store !== 'postgres' ? [{ label: 'SQLite' }] : []),
    ...(store !== 'sqlite' ? [{ label: 'PostgreSQL', adminUrl }] : []),
  ];
  process.stdout.write(
    `OpenAPI fuzz: ${options.cases} cases per store, seed ${options.seed}, ${options.concurrency} in flight\n`,
  );
  let findings = 0;
  for (const { label, adminUrl: url } of stores) {
    const target = await startFuzzTarget(url ? { adminUrl: url } : {});
    try {
      const started = performance.now();
      const report = await runFuzz({
        baseUrl: target.baseUrl,
        arbitrary: target.arbitrary,
        count: options.cases,
        seed: options.seed,
        concurrency: options.concurrency,
        onProgress: (done) => process.stderr.write(`\r${label}: ${done}/${options.cases}`),
      });
      process.stderr.write('\r\x1b[K');
      print(`${label} (${target.operations.length} operations)`, report, (performance.now() - started) / 1000);
      findings += report.serverErrors.length + report.dropped.length + report.unshapedErrors.length;
    } finally {
      await target.close();
    }
  }
  if (findings > 0) process.exitCode = 1;
}
