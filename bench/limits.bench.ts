/**
 * `npm run bench -- limits [--backends embedded,redis,postgres] [--endpoint account|categories]
 *   [--duration s] [--slice s] [--warmup s] [--connections n] [--rounds n]` (--help lists all)
 *
 * The rate limiter's own cost: requests/s of one authenticated, limited GET on a real Dragnet
 * server (a child process on 127.0.0.1, loaded by autocannon from this process) with the limiter
 * on, against the same server with DRAGNET_RATE_LIMITS=off, in the same run, for each counter
 * backend:
 *   embedded  the SQLite store; counts in the process's memory, written behind to SQLite;
 *   redis     the PostgreSQL store with DRAGNET_REDIS_URL; counts in Redis (Lua scripts);
 *   postgres  the PostgreSQL store without Redis; counts in rows (dragnet_rate_reserve).
 * Per backend both servers run side by side, each on its own fresh store, and take turns under
 * load in short alternating slices, so other work on the machine weighs on both alike.
 * The organization's limits are raised to 1,000,000,000 (per second, per month, and the
 * endpoint's day) so the load never meets a 429 while every request still takes the full path:
 * three buckets checked and incremented. ("none" would drop the buckets and measure an empty
 * reservation instead.)
 * Goal: cost = 1 - on/off of requests/s at most 15% per backend; exit code 1 when missed.
 */
import { positive, withSliceOptions } from './support/options.ts';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Command, InvalidArgumentError, Option } from 'commander';
import {
  DEFAULT_REDIS_URL,
  deleteRedisCounters,
  logInBenchUser,
  prepareOrganization,
  RAISED_LIMIT,
  reachable,
} from './support/bench-org.ts';
import { startChildServer } from './support/child-server.ts';
import { CleanupScope } from './support/cleanup.ts';
import { httpJson, withDeadline } from './support/http.ts';
import { combineSlices, int, loadSlice, median, medianFigures, ms, type LoadFigures } from './support/load.ts';
import { createBenchStore, DEFAULT_POSTGRES_ADMIN_URL, type StoreKind } from './support/store.ts';

const GOAL_PERCENT = 15;
const SERVERS_ENTRY = fileURLToPath(new URL('./support/servers.ts', import.meta.url));
const SETTLE_MS = 2_000;

type Backend = 'embedded' | 'redis' | 'postgres';
type Limiter = 'on' | 'off';

const BACKENDS: Record<Backend, { store: StoreKind; redis: boolean; label: string }> = {
  embedded: { store: 'sqlite', redis: false, label: 'embedded: SQLite store, counts in memory + write-behind' },
  redis: { store: 'postgres', redis: true, label: 'redis: PostgreSQL store, counts in Redis' },
  postgres: { store: 'postgres', redis: false, label: 'postgres: PostgreSQL store, counts in rows' },
};

const ENDPOINTS = {
  account: { path: '/service/account/', slug: 'account' },
  categories: { path: '/service/messenger-channels-categories/', slug: 'messenger-channels-categories' },
} as const;
type EndpointName = keyof typeof ENDPOINTS;

interface LimitsBenchOptions {
  backends: Backend[];
  endpoint: EndpointName;
  adminUrl: string;
  redisUrl: string;
  duration: number;
  slice: number;
  warmup: number;
  connections: number;
  rounds: number;
}

const backendList = (raw: string): Backend[] => {
  const names = raw
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  for (const name of names) {
    if (!(name in BACKENDS))
      throw new InvalidArgumentError(`unknown backend "${name}" (${Object.keys(BACKENDS).join(', ')})`);
  }
  if (names.length === 0) throw new InvalidArgumentError('name at least one backend');
  return [...new Set(names)] as Backend[];
};

function parseOptions(args: string[]): LimitsBenchOptions {
  const program = withSliceOptions(new Command('npm run bench -- limits'), 'side')
    .description(
      'requests/s of a limited GET with the rate limiter on versus DRAGNET_RATE_LIMITS=off, per counter backend',
    )
    .option('--backends <list>', 'comma-separated: embedded, redis, postgres', backendList, [
      'embedded',
      'redis',
      'postgres',
    ] as Backend[])
    .addOption(
      new Option('--endpoint <name>', 'the limited GET to load').choices(Object.keys(ENDPOINTS)).default('account'),
    )
    .option(
      '--admin-url <url>',
      'PostgreSQL admin connection (redis and postgres backends: a fresh database per server, dropped after)',
      process.env.DRAGNET_BENCH_DATABASE_URL || DEFAULT_POSTGRES_ADMIN_URL,
    )
    .option(
      '--redis-url <url>',
      'Redis for the redis backend',
      process.env.DRAGNET_BENCH_REDIS_URL || DEFAULT_REDIS_URL,
    )
    .option('--connections <n>', 'concurrent autocannon connections', positive('--connections', true, 1000), 10)
    .option(
      '--rounds <n>',
      'repeat each backend on a fresh pair of servers; figures are medians',
      positive('--rounds', true, 20),
      1,
    )
    .exitOverride((error) => process.exit(error.exitCode === 0 ? 0 : 2))
    .allowExcessArguments(false);
  program.parse(args, { from: 'user' });
  return program.opts<LimitsBenchOptions>();
}

interface Target {
  url: string;
  headers: Record<string, string>;
}

/**
 * One side of a pair: a fresh store and Dragnet server with the limiter on or off, logged in and
 * probed. Everything it creates is undone when `scope` closes.
 */
async function startSide(
  backend: Backend,
  limiter: Limiter,
  options: LimitsBenchOptions,
  scope: CleanupScope,
): Promise<Target> {
  const { store: kind, redis } = BACKENDS[backend];
  const endpoint = ENDPOINTS[options.endpoint];
  const store = await createBenchStore(kind, scope, options.adminUrl);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOST: '127.0.0.1',
    PORT: '0',
    DRAGNET_LOG_LEVEL: 'warn',
    ...store.env,
  };
  delete env.DRAGNET_REDIS_URL;
  delete env.DRAGNET_RATE_LIMITS;
  if (kind === 'sqlite') delete env.DRAGNET_DATABASE_URL;
  if (redis) env.DRAGNET_REDIS_URL = options.redisUrl;
  if (limiter === 'off') env.DRAGNET_RATE_LIMITS = 'off';

  const orgId = await prepareOrganization(env, [endpoint.slug]);
  if (redis)
    scope.defer(`delete the Redis counters of organization ${orgId}`, () =>
      deleteRedisCounters(options.redisUrl, orgId),
    );
  const server = await startChildServer({
    entry: SERVERS_ENTRY,
    args: ['dragnet'],
    env,
    scope,
    label: `Dragnet server (${backend}, limiter ${limiter})`,
  });
  const { headers } = await logInBenchUser(server);
  const url = `${server.url}${endpoint.path}`;

  // The probe proves which side this is: the raised limits in the headers, or no limiter at all.
  const probe = await httpJson(url, { headers });
  if (probe.status !== 200)
    throw new Error(`GET ${endpoint.path} answered ${probe.status} ${JSON.stringify(probe.body)}`);
  const limitHeader = probe.headers.get('x-ratelimit-limit');
  const accountHeader = probe.headers.get('x-ratelimit-account-limit');
  if (limiter === 'on' && (limitHeader !== String(RAISED_LIMIT) || accountHeader !== String(RAISED_LIMIT))) {
    throw new Error(
      `limiter on, but X-RateLimit-Limit=${limitHeader} X-RateLimit-Account-Limit=${accountHeader} (expected ${RAISED_LIMIT})`,
    );
  }
  if (limiter === 'off' && (limitHeader !== null || accountHeader !== null)) {
    throw new Error(`DRAGNET_RATE_LIMITS=off, but the response carries X-RateLimit-Limit=${limitHeader}`);
  }
  return { url, headers };
}

/**
 * One round for a backend: both servers run side by side and are loaded in turn, in short
 * slices, off-on-off-on-… so that whatever else the machine does in the meantime weighs on both
 * sides alike (one long run each would compare two different moments).
 */
async function measurePair(
  backend: Backend,
  round: number,
  options: LimitsBenchOptions,
): Promise<Record<Limiter, LoadFigures>> {
  const scope = new CleanupScope();
  try {
    const targets: Record<Limiter, Target> = {
      off: await startSide(backend, 'off', options, scope),
      on: await startSide(backend, 'on', options, scope),
    };
    const load = (side: Limiter, duration: number) => loadSlice(targets[side], options.connections, duration);
    for (const side of ['off', 'on'] as const) await load(side, options.warmup);

    const slices = Math.max(1, Math.round(options.duration / options.slice));
    const collected: Record<Limiter, LoadFigures[]> = { off: [], on: [] };
    // Strict alternation (the first side flips each round): a server never gets two slices in a
    // row, so the requests autocannon abandons at a slice's end are settled before its next one.
    const order: readonly Limiter[] = round % 2 === 1 ? ['off', 'on'] : ['on', 'off'];
    for (let i = 0; i < slices; i++) {
      for (const side of order) {
        const figures = await load(side, options.slice);
        if (figures.requests === 0)
          process.stdout.write(
            `  note: ${backend}, limiter ${side}: no request completed in slice ${i + 1} (server stalled)\n`,
          );
        collected[side].push(figures);
      }
    }
    // autocannon drops its sockets when the time is up; let the requests still in the servers
    // finish before they are stopped, so none of them runs into a closed store.
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    return { off: combineSlices(collected.off, options.slice), on: combineSlices(collected.on, options.slice) };
  } finally {
    await scope.close();
  }
}

const pct = (value: number) => `${value >= 0 ? '' : '-'}${Math.abs(value).toFixed(1)}%`;
const loadText = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows
    .map((row) =>
      row
        .map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

interface BackendResult {
  backend: Backend;
  off: LoadFigures;
  on: LoadFigures;
  /** Median over rounds of 1 - on/off, in percent. */
  cost: number;
  costs: number[];
}

export async function run(args: string[]): Promise<void> {
  const options = parseOptions(args);
  const endpoint = ENDPOINTS[options.endpoint];

  const skipped: string[] = [];
  const backends: Backend[] = [];
  const postgresProblem = options.backends.some((b) => BACKENDS[b].store === 'postgres')
    ? await reachable('postgres', options.adminUrl)
    : null;
  const redisProblem = options.backends.includes('redis') ? await reachable('redis', options.redisUrl) : null;
  for (const backend of options.backends) {
    const problem =
      BACKENDS[backend].store === 'postgres' && postgresProblem
        ? `PostgreSQL: ${postgresProblem}`
        : backend === 'redis'
          ? redisProblem && `Redis: ${redisProblem}`
          : null;
    if (problem) skipped.push(`${backend} (${problem})`);
    else backends.push(backend);
  }
  if (backends.length === 0) throw new Error(`no backend can run: ${skipped.join('; ')}`);

  const cpuList = cpus();
  process.stdout.write(
    `limits: ${cpuList.length} CPU(s) ${cpuList[0]?.model.trim() ?? ''}, Node ${process.version}; ` +
      `GET ${endpoint.path}, ${options.connections} connections; per backend two servers (limiter off, on) in child processes ` +
      `on 127.0.0.1, ${options.warmup} s warm-up each, then ${options.duration} s each in ${options.slice} s slices taking turns` +
      `${options.rounds > 1 ? `, ${options.rounds} rounds` : ''}; ` +
      `limits raised to ${int(RAISED_LIMIT)}; load average before: ${loadText()}\n`,
  );
  if (skipped.length) process.stdout.write(`skipped: ${skipped.join('; ')}\n`);

  // Generous: per round two server starts (migrations, one argon2 hash each) and the loads.
  const budgetMs = options.rounds * backends.length * (2 * (options.warmup + options.duration) + 240) * 1000;
  const results = await withDeadline(
    budgetMs,
    (async () => {
      const out: BackendResult[] = [];
      for (const backend of backends) {
        const pairs: Array<Record<Limiter, LoadFigures>> = [];
        for (let round = 1; round <= options.rounds; round++) {
          const tag = options.rounds > 1 ? `round ${round}/${options.rounds}: ` : '';
          process.stdout.write(`${tag}${backend}: limiter off and on side by side ...\n`);
          pairs.push(await measurePair(backend, round, options));
        }
        const costs = pairs.map(({ on, off }) => (1 - on.rps / off.rps) * 100);
        out.push({
          backend,
          off: medianFigures(pairs.map((p) => p.off)),
          on: medianFigures(pairs.map((p) => p.on)),
          cost: median(costs),
          costs,
        });
      }
      return out;
    })(),
  );

  const rows = [['backend', 'limiter', 'req/s', 'p50 ms', 'p99 ms', 'max ms', 'requests', 'cost']];
  for (const r of results) {
    rows.push([r.backend, 'off', int(r.off.rps), ms(r.off.p50), ms(r.off.p99), ms(r.off.max), int(r.off.requests), '']);
    const rounds = r.costs.length > 1 ? ` (rounds: ${r.costs.map(pct).join(', ')})` : '';
    rows.push([
      r.backend,
      'on',
      int(r.on.rps),
      ms(r.on.p50),
      ms(r.on.p99),
      ms(r.on.max),
      int(r.on.requests),
      pct(r.cost) + rounds,
    ]);
  }
  process.stdout.write(`\n${table(rows)}\nload average after: ${loadText()}\n\n`);

  let pass = true;
  for (const r of results) {
    const ok = r.cost <= GOAL_PERCENT;
    pass &&= ok;
    process.stdout.write(
      `limits: ${BACKENDS[r.backend].label}: off ${int(r.off.rps)} req/s, on ${int(r.on.rps)} req/s ` +
        `(p99 ${ms(r.off.p99)} -> ${ms(r.on.p99)} ms), cost ${pct(r.cost)} (goal <= ${GOAL_PERCENT}%): ${ok ? 'PASS' : 'FAIL'}\n`,
    );
  }
  if (!pass) process.exitCode = 1;
}
