/**
 * `npm run bench -- api [--store sqlite|postgres] [--duration s] [--warmup s] [--connections n] [--rounds n]`
 *
 * Framework overhead of the API: (a) an authenticated `GET /service/account/` on the real
 * Dragnet server against (b) a bare Fastify route `GET /bare`, each in its own child process on
 * 127.0.0.1, one after the other, loaded by autocannon from this process. Target: (a) reaches
 * at least 40% of (b)'s requests/s. Exit code 1 when the target is missed.
 */
import { positive } from './support/options.ts';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Command, Option } from 'commander';
import { logInBenchUser } from './support/bench-org.ts';
import { startChildServer } from './support/child-server.ts';
import { CleanupScope } from './support/cleanup.ts';
import { httpJson, withDeadline } from './support/http.ts';
import { int, measure, median, medianFigures, ms, type LoadFigures, type LoadOptions } from './support/load.ts';
import { createBenchStore, DEFAULT_POSTGRES_ADMIN_URL, type StoreKind } from './support/store.ts';

const TARGET_PERCENT = 40;
const SERVERS_ENTRY = fileURLToPath(new URL('./support/servers.ts', import.meta.url));

interface ApiBenchOptions {
  store: StoreKind;
  adminUrl: string;
  duration: number;
  warmup: number;
  connections: number;
  rounds: number;
}

function parseOptions(args: string[]): ApiBenchOptions {
  const program = new Command('npm run bench -- api')
    .description('authenticated GET /service/account/ on Dragnet versus a bare Fastify route')
    .addOption(
      new Option('--store <engine>', 'the store behind Dragnet').choices(['sqlite', 'postgres']).default('sqlite'),
    )
    .option(
      '--admin-url <url>',
      'PostgreSQL admin connection for --store postgres (a fresh database is created on that server and dropped)',
      process.env.DRAGNET_BENCH_DATABASE_URL || DEFAULT_POSTGRES_ADMIN_URL,
    )
    .option('--duration <seconds>', 'measured load per server', positive('--duration', false, 600), 10)
    .option('--warmup <seconds>', 'unmeasured load per server before measuring', positive('--warmup', false, 600), 2)
    .option('--connections <n>', 'concurrent autocannon connections', positive('--connections', true, 1000), 10)
    .option(
      '--rounds <n>',
      'alternate (a) and (b) this many times, each on a fresh server; figures are medians (for noisy, shared machines)',
      positive('--rounds', true, 20),
      1,
    )
    .exitOverride((error) => process.exit(error.exitCode === 0 ? 0 : 2))
    .allowExcessArguments(false);
  program.parse(args, { from: 'user' });
  return program.opts<ApiBenchOptions>();
}

/** The caller's DRAGNET_* settings (a Redis URL, limits off, …) must not change what is measured. */
function withoutDragnetSettings(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !name.startsWith('DRAGNET_')));
}

/** (a): a fresh store and Dragnet server, removed again before returning. */
async function measureDragnet(options: ApiBenchOptions, load: LoadOptions): Promise<LoadFigures> {
  const scope = new CleanupScope();
  try {
    const store = await createBenchStore(options.store, scope, options.adminUrl);
    const env: NodeJS.ProcessEnv = {
      ...withoutDragnetSettings(process.env),
      HOST: '127.0.0.1',
      PORT: '0',
      DRAGNET_LOG_LEVEL: 'warn',
      BENCH_ROUTES: '/service/account/',
      ...store.env,
    };
    const server = await startChildServer({
      entry: SERVERS_ENTRY,
      args: ['dragnet'],
      env,
      scope,
      label: 'Dragnet server',
    });
    const { email, headers } = await logInBenchUser(server);
    const url = `${server.url}/service/account/`;
    const probe = await httpJson(url, { headers });
    if (probe.status !== 200 || (probe.body as { email?: unknown } | null)?.email !== email) {
      throw new Error(`GET /service/account/ answered ${probe.status} ${JSON.stringify(probe.body)}`);
    }
    return await measure(url, { ...load, headers });
  } finally {
    await scope.close();
  }
}

/** (b): a bare Fastify server, stopped again before returning. */
async function measureBare(load: LoadOptions): Promise<LoadFigures> {
  const scope = new CleanupScope();
  try {
    const env: NodeJS.ProcessEnv = { ...process.env, HOST: '127.0.0.1' };
    const server = await startChildServer({
      entry: SERVERS_ENTRY,
      args: ['bare'],
      env,
      scope,
      label: 'bare Fastify server',
    });
    const url = `${server.url}/bare`;
    const probe = await httpJson(url);
    if (probe.status !== 200) throw new Error(`GET /bare answered ${probe.status}`);
    return await measure(url, load);
  } finally {
    await scope.close();
  }
}

const loadText = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');

function table(rows: Array<{ name: string; figures: LoadFigures; ratio?: number }>): string {
  const header = ['', 'req/s', 'p50 ms', 'p99 ms', 'max ms', 'requests', '(a)/(b)'];
  const body = rows.map(({ name, figures: f, ratio }) => [
    name,
    int(f.rps),
    ms(f.p50),
    ms(f.p99),
    ms(f.max),
    int(f.requests),
    ratio === undefined ? '' : `${ratio.toFixed(1)}%`,
  ]);
  const all = [header, ...body];
  const widths = header.map((_, column) => Math.max(...all.map((row) => row[column]!.length)));
  return all
    .map((row) =>
      row
        .map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

export async function run(args: string[]): Promise<void> {
  const options = parseOptions(args);
  const load: LoadOptions = { connections: options.connections, duration: options.duration, warmup: options.warmup };
  const cpuList = cpus();
  process.stdout.write(
    `api: ${cpuList.length} CPU(s) ${cpuList[0]?.model.trim() ?? ''}, Node ${process.version}; ` +
      `${load.connections} connections, ${load.warmup} s warm-up + ${load.duration} s measured per server` +
      `${options.rounds > 1 ? `, ${options.rounds} rounds` : ''}; ` +
      `servers in child processes on 127.0.0.1, one at a time; Dragnet store: ${options.store}; ` +
      `load average before: ${loadText()}\n`,
  );
  // The benchmark itself keeps about two processes runnable (server and autocannon).
  const busy = (own: number) => (loadavg()[0] ?? 0) > cpuList.length + own;
  if (busy(0)) {
    process.stdout.write(
      `warning: the machine is busy (load average above ${cpuList.length}): expect low, noisy figures\n`,
    );
  }

  // Generous: per round two server starts (migrations, one argon2 hash), warm-ups and loads.
  const budgetMs = options.rounds * (2 * (load.warmup + load.duration) + 120) * 1000;
  const rounds = await withDeadline(
    budgetMs,
    (async () => {
      const results: Array<{ dragnet: LoadFigures; bare: LoadFigures }> = [];
      for (let round = 1; round <= options.rounds; round++) {
        const tag = options.rounds > 1 ? `round ${round}/${options.rounds}: ` : '';
        process.stdout.write(`${tag}(a) Dragnet, authenticated GET /service/account/ ...\n`);
        const dragnet = await measureDragnet(options, load);
        process.stdout.write(`${tag}(b) bare Fastify, GET /bare ...\n`);
        const bare = await measureBare(load);
        results.push({ dragnet, bare });
      }
      return results;
    })(),
  );

  const ratios = rounds.map(({ dragnet, bare }) => (dragnet.rps / bare.rps) * 100);
  const dragnet = medianFigures(rounds.map((r) => r.dragnet));
  const bare = medianFigures(rounds.map((r) => r.bare));
  const ratio = median(ratios);
  const pass = ratio >= TARGET_PERCENT;
  const rows: Array<{ name: string; figures: LoadFigures; ratio?: number }> = [];
  const nameA = `(a) Dragnet GET /service/account/ [${options.store}]`;
  const nameB = '(b) bare Fastify GET /bare';
  if (rounds.length > 1) {
    rounds.forEach((r, index) => {
      rows.push({ name: `round ${index + 1} ${nameA}`, figures: r.dragnet, ratio: ratios[index] });
      rows.push({ name: `round ${index + 1} ${nameB}`, figures: r.bare });
    });
    rows.push({ name: `median ${nameA}`, figures: dragnet, ratio });
    rows.push({ name: `median ${nameB}`, figures: bare });
  } else {
    rows.push({ name: nameA, figures: dragnet, ratio }, { name: nameB, figures: bare });
  }
  // Other work on the machine skews both sides; the load average makes that visible.
  process.stdout.write(
    `\n${table(rows)}\nload average after: ${loadText()}${busy(2) ? ' (busy: figures are not representative)' : ''}\n\n`,
  );
  process.stdout.write(
    `api: authenticated GET (${options.store}) = ${int(dragnet.rps)} req/s (p99 ${ms(dragnet.p99)} ms), ` +
      `bare = ${int(bare.rps)} req/s (p99 ${ms(bare.p99)} ms), ` +
      `ratio ${ratio.toFixed(1)}% (target >= ${TARGET_PERCENT}%): ${pass ? 'PASS' : 'FAIL'}\n`,
  );
  if (!pass) process.exitCode = 1;
}
