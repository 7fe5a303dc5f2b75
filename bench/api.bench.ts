/**
 * `npm run bench -- api [--duration s] [--slice s] [--warmup s] [--connections n] [--rounds n]
 *  [--stores sqlite,postgres] [--admin-url url] [--redis-url url]`
 *
 * Framework overhead of the API, every store in one run: an authenticated, rate-limited
 * `GET /service/account/` on the real Dragnet server on SQLite, and on PostgreSQL with its counts
 * in Redis (the scale-out configuration: DRAGNET_DATABASE_URL + DRAGNET_REDIS_URL), against a
 * bare Fastify route `GET /bare` (the same Fastify, a trivial JSON answer). Every server runs in
 * its own child process on 127.0.0.1, side by side; they take turns under load in short slices,
 * in a rotation that shifts each slice, so whatever else the machine does weighs on all alike.
 * The load generator (autocannon) runs in a child process of its own, and its CPU time is shown
 * beside each server's. Target: each store reaches at least 45% of bare Fastify's requests/s
 * (the median of the rounds' ratios). Exit code 1 when a store misses it.
 */
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { Redis } from 'ioredis';
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
import { combineSlices, int, median, medianFigures, ms, type LoadFigures } from './support/load.ts';
import { startLoadGenerator, type LoadGenerator } from './support/load-generator.ts';
import { cpuSecondsOf } from './support/process-cpu.ts';
import { positive, withSliceOptions } from './support/options.ts';
import { createBenchStore, DEFAULT_POSTGRES_ADMIN_URL, type StoreKind } from './support/store.ts';

const TARGET_PERCENT = 45;
const SERVERS_ENTRY = fileURLToPath(new URL('./support/servers.ts', import.meta.url));
const ACCOUNT_PATH = '/service/account/';
const STORES: readonly StoreKind[] = ['sqlite', 'postgres'];

interface ApiBenchOptions {
  stores: StoreKind[];
  adminUrl: string;
  redisUrl: string;
  duration: number;
  slice: number;
  warmup: number;
  connections: number;
  rounds: number;
}

function parseOptions(args: string[]): ApiBenchOptions {
  const program = withSliceOptions(new Command('npm run bench -- api'), 'server')
    .description(
      'authenticated, rate-limited GET /service/account/ on SQLite and on PostgreSQL + Redis versus a bare Fastify route',
    )
    .option(
      '--stores <list>',
      'the Dragnet stores to measure: sqlite, postgres (PostgreSQL with its counts in Redis), or both',
      (raw: string) => {
        const list = [...new Set(raw.split(',').map((s) => s.trim()))];
        for (const kind of list) {
          if (!STORES.includes(kind as StoreKind)) throw new Error(`--stores: unknown store "${kind}"`);
        }
        return list as StoreKind[];
      },
      [...STORES],
    )
    .option(
      '--admin-url <url>',
      'PostgreSQL admin connection (a fresh database is created on that server per round and dropped)',
      process.env.DRAGNET_BENCH_DATABASE_URL || DEFAULT_POSTGRES_ADMIN_URL,
    )
    .option(
      '--redis-url <url>',
      'Redis for the PostgreSQL server’s rate-limit counts',
      process.env.DRAGNET_BENCH_REDIS_URL || DEFAULT_REDIS_URL,
    )
    .option('--connections <n>', 'concurrent autocannon connections', positive('--connections', true, 1000), 10)
    .option(
      '--rounds <n>',
      'repeat on fresh servers; figures are medians, ratios the median of each round’s',
      positive('--rounds', true, 20),
      1,
    )
    .exitOverride((error) => process.exit(error.exitCode === 0 ? 0 : 2))
    .allowExcessArguments(false);
  program.parse(args, { from: 'user' });
  return program.opts<ApiBenchOptions>();
}

/** The caller's DRAGNET_* settings (limits off, a log level, …) must not change what is measured. */
function withoutDragnetSettings(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !name.startsWith('DRAGNET_')));
}

type VariantKey = 'bare' | StoreKind;

interface Variant {
  key: VariantKey;
  name: string;
  target: { url: string; headers?: Record<string, string> };
  pid: number;
}

const NAMES: Record<VariantKey, string> = {
  bare: 'bare Fastify GET /bare',
  sqlite: `Dragnet GET ${ACCOUNT_PATH}, SQLite`,
  postgres: `Dragnet GET ${ACCOUNT_PATH}, PostgreSQL + Redis`,
};

/**
 * A Dragnet server on a fresh store of `kind` (PostgreSQL: with DRAGNET_REDIS_URL, the rate
 * limiter's scale-out backend), the Bench organization's limits raised to 10⁹ so every request
 * is counted and none refused, logged in. The probe checks the limiter is on (the raised limit in
 * the headers) and, for PostgreSQL, that the counts went to Redis.
 */
async function deployDragnet(scope: CleanupScope, options: ApiBenchOptions, kind: StoreKind): Promise<Variant> {
  const store = await createBenchStore(kind, scope, options.adminUrl);
  const env: NodeJS.ProcessEnv = {
    ...withoutDragnetSettings(process.env),
    HOST: '127.0.0.1',
    PORT: '0',
    DRAGNET_LOG_LEVEL: 'warn',
    BENCH_ROUTES: ACCOUNT_PATH,
    ...store.env,
  };
  if (kind === 'postgres') env.DRAGNET_REDIS_URL = options.redisUrl;
  const orgId = await prepareOrganization(env, ['account']);
  if (kind === 'postgres')
    scope.defer(`delete the Redis counters of organization ${orgId}`, () =>
      deleteRedisCounters(options.redisUrl, orgId),
    );
  const server = await startChildServer({
    entry: SERVERS_ENTRY,
    args: ['dragnet'],
    env,
    scope,
    label: `Dragnet server (${kind})`,
  });
  const { email, headers } = await logInBenchUser(server);
  const url = `${server.url}${ACCOUNT_PATH}`;
  const probe = await httpJson(url, { headers });
  if (probe.status !== 200 || (probe.body as { email?: unknown } | null)?.email !== email)
    throw new Error(`${kind}: GET ${ACCOUNT_PATH} answered ${probe.status} ${JSON.stringify(probe.body)}`);
  const limit = probe.headers.get('x-ratelimit-account-limit');
  if (limit !== String(RAISED_LIMIT))
    throw new Error(`${kind}: X-RateLimit-Account-Limit is ${limit}, not the raised ${RAISED_LIMIT}`);
  if (kind === 'postgres') {
    const redis = new Redis(options.redisUrl, { maxRetriesPerRequest: 1 });
    try {
      const [, keys] = await redis.scan('0', 'MATCH', `dragnet:rl:${orgId}|*`, 'COUNT', 1000);
      if (keys.length === 0) throw new Error(`postgres: no rate-limit counts of organization ${orgId} in Redis`);
    } finally {
      await redis.quit();
    }
  }
  return { key: kind, name: NAMES[kind], target: { url, headers }, pid: server.pid };
}

async function startBare(scope: CleanupScope): Promise<Variant> {
  const server = await startChildServer({
    entry: SERVERS_ENTRY,
    args: ['bare'],
    env: { ...withoutDragnetSettings(process.env), HOST: '127.0.0.1' },
    scope,
    label: 'bare Fastify server',
  });
  const url = `${server.url}/bare`;
  const probe = await httpJson(url);
  if (probe.status !== 200) throw new Error(`GET /bare answered ${probe.status}`);
  return { key: 'bare', name: NAMES.bare, target: { url }, pid: server.pid };
}

/** Redis's process id, when it runs on this host (its CPU time is then read from /proc). */
async function redisPidOf(url: string): Promise<number | null> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    const pid = Number(/process_id:(\d+)/.exec(await redis.info('server'))?.[1]);
    return Number.isInteger(pid) && cpuSecondsOf(pid) >= 0 ? pid : null;
  } finally {
    await redis.quit();
  }
}

/** CPU cores in use while a variant was under load (CPU seconds ÷ measured seconds). */
interface Cores {
  server: number;
  generator: number;
  redis: number;
}

interface RoundResult {
  figures: Partial<Record<VariantKey, LoadFigures>>;
  cores: Partial<Record<VariantKey, Cores>>;
}

async function runRound(
  options: ApiBenchOptions,
  round: number,
  generator: LoadGenerator,
  redisPid: number | null,
): Promise<RoundResult> {
  const scope = new CleanupScope();
  try {
    const variants: Variant[] = [await startBare(scope)];
    for (const kind of options.stores) variants.push(await deployDragnet(scope, options, kind));
    const n = options.connections;
    for (const variant of variants) await generator.slice(variant.target, n, options.warmup);

    const slices = new Map(variants.map((v) => [v.key, [] as LoadFigures[]]));
    const cpu = new Map(variants.map((v) => [v.key, { server: 0, generator: 0, redis: 0 }]));
    const count = Math.max(1, Math.round(options.duration / options.slice));
    for (let i = 0; i < count; i++) {
      // Each slice starts the rotation one place further (and each round elsewhere again).
      const shift = (i + round) % variants.length;
      for (const variant of [...variants.slice(shift), ...variants.slice(0, shift)]) {
        const server = cpuSecondsOf(variant.pid);
        const redis = redisPid === null ? Number.NaN : cpuSecondsOf(redisPid);
        const { figures, cpuSeconds } = await generator.slice(variant.target, n, options.slice);
        const used = cpu.get(variant.key)!;
        used.server += cpuSecondsOf(variant.pid) - server;
        used.generator += cpuSeconds;
        used.redis += (redisPid === null ? Number.NaN : cpuSecondsOf(redisPid)) - redis;
        if (figures.requests === 0)
          process.stdout.write(`  note: ${variant.name}: no request completed in slice ${i + 1}\n`);
        slices.get(variant.key)!.push(figures);
      }
    }
    const measured = count * options.slice;
    const result: RoundResult = { figures: {}, cores: {} };
    for (const variant of variants) {
      result.figures[variant.key] = combineSlices(slices.get(variant.key)!, options.slice);
      const used = cpu.get(variant.key)!;
      result.cores[variant.key] = {
        server: used.server / measured,
        generator: used.generator / measured,
        redis: used.redis / measured,
      };
    }
    return result;
  } finally {
    await scope.close();
  }
}

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

export async function run(args: string[]): Promise<void> {
  const options = parseOptions(args);
  const cpuList = cpus();
  const keys: VariantKey[] = ['bare', ...options.stores];
  process.stdout.write(
    `api: ${cpuList.length} CPU(s) ${cpuList[0]?.model.trim() ?? ''}, Node ${process.version}; ` +
      `${options.connections} connections; per server ${options.warmup} s warm-up + ${options.duration} s measured ` +
      `in ${options.slice} s slices, servers side by side taking turns` +
      `${options.rounds > 1 ? `, ${options.rounds} rounds` : ''}; autocannon in its own process; ` +
      `load average before: ${loadText()}\n`,
  );
  // The benchmark itself keeps about two processes runnable (one server and autocannon).
  const busy = (own: number) => (loadavg()[0] ?? 0) > cpuList.length + own;
  if (busy(0))
    process.stdout.write(
      `warning: the machine is busy (load average above ${cpuList.length}): expect low, noisy figures\n`,
    );
  if (options.stores.includes('postgres')) {
    for (const [what, url] of [
      ['postgres', options.adminUrl],
      ['redis', options.redisUrl],
    ] as const) {
      const why = await reachable(what, url);
      if (why !== null) throw new Error(`${what} at ${new URL(url).host} is not reachable: ${why}`);
    }
  }

  const scope = new CleanupScope();
  const rounds: RoundResult[] = [];
  try {
    const generator = await startLoadGenerator(scope);
    const redisPid = options.stores.includes('postgres') ? await redisPidOf(options.redisUrl) : null;
    // Generous: per round the server starts (migrations, one argon2 hash), warm-ups and loads.
    const budgetMs = options.rounds * (keys.length * (options.warmup + options.duration) + 180) * 1000;
    await withDeadline(
      budgetMs,
      (async () => {
        for (let round = 1; round <= options.rounds; round++) {
          process.stdout.write(
            `${options.rounds > 1 ? `round ${round}/${options.rounds}: ` : ''}starting the servers, then loading them in turn ...\n`,
          );
          rounds.push(await runRound(options, round, generator, redisPid));
        }
      })(),
    );
  } finally {
    await scope.close();
  }

  const figures = (key: VariantKey) => medianFigures(rounds.map((r) => r.figures[key]!));
  const cores = (key: VariantKey, part: keyof Cores) => median(rounds.map((r) => r.cores[key]![part]));
  const ratios = (key: VariantKey) => rounds.map((r) => (r.figures[key]!.rps / r.figures.bare!.rps) * 100);
  const pct = (value: number) => `${value.toFixed(1)}%`;
  const cpuText = (value: number) => (Number.isNaN(value) ? '–' : value.toFixed(2));
  const header = [
    '',
    'req/s',
    'p50 ms',
    'p99 ms',
    'max ms',
    'of bare',
    'CPU cores: server / autocannon / Redis',
    'µs CPU per request: server / autocannon',
  ];
  const rows = [header];
  for (const key of keys) {
    const f = figures(key);
    const perRequest = (part: keyof Cores) => (f.rps > 0 ? ((cores(key, part) / f.rps) * 1e6).toFixed(1) : '–');
    rows.push([
      NAMES[key],
      int(f.rps),
      ms(f.p50),
      ms(f.p99),
      ms(f.max),
      key === 'bare' ? '' : pct(median(ratios(key))),
      `${cpuText(cores(key, 'server'))} / ${cpuText(cores(key, 'generator'))} / ${key === 'postgres' ? cpuText(cores(key, 'redis')) : '–'}`,
      `${perRequest('server')} / ${perRequest('generator')}`,
    ]);
  }
  // Other work on the machine skews every variant; the load average makes that visible.
  process.stdout.write(
    `\n${table(rows)}\nload average after: ${loadText()}${busy(2) ? ' (busy: figures are not representative)' : ''}\n\n`,
  );
  const bare = figures('bare');
  for (const key of options.stores) {
    const f = figures(key);
    const values = ratios(key);
    const ratio = median(values);
    const pass = ratio >= TARGET_PERCENT;
    process.stdout.write(
      `api: ${key === 'sqlite' ? 'SQLite' : 'PostgreSQL + Redis'}: authenticated GET = ${int(f.rps)} req/s ` +
        `(p50 ${ms(f.p50)} ms, p99 ${ms(f.p99)} ms), bare = ${int(bare.rps)} req/s, ratio ${pct(ratio)}` +
        `${values.length > 1 ? ` (rounds: ${values.map(pct).join(', ')})` : ''} (target >= ${TARGET_PERCENT}%): ` +
        `${pass ? 'PASS' : 'FAIL'}\n`,
    );
    if (!pass) process.exitCode = 1;
  }
}
