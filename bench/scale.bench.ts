/**
 * `npm run bench -- scale [--duration s] [--slice s] [--warmup s] [--connections n] [--rounds n]
 *   [--soak-minutes m] [--soak-clients n] [--no-throughput]` (--help lists all)
 *
 * 1. Throughput of an authenticated `GET /service/account/` (autocannon from this process,
 *    servers in child processes on 127.0.0.1), for:
 *      bare Fastify (the reference), the embedded store (SQLite) with the limiter on and off,
 *      PostgreSQL + Redis with the limiter on and off in one API process, and the limiter on in
 *      two API processes on the same store (the load spread over both).
 *    Every configuration runs side by side and they take turns under load in short slices, so
 *    other work on the machine weighs on all of them alike (as `bench -- limits` does). One API
 *    process gets `--connections` connections, two get twice as many.
 *    Goals (issue 15): PostgreSQL + Redis in one process at least 25% of bare Fastify's
 *    requests/s, the limiter's cost (1 - on/off) at most 15%, two processes at least 1.6 times
 *    one.
 * 2. A soak: two API processes on PostgreSQL + Redis under mixed traffic (reads of the account,
 *    organization, usage, channels, history, settings and rules; messenger searches; webhook
 *    writes; a login every few seconds) for `--soak-minutes` (default 20), with every process's
 *    RSS and the p99 latency per minute. Goal: RSS at the end at most 10% above the end of the
 *    first minute (the warm-up), in every process.
 * Exit code 1 when a goal is missed.
 */
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { Redis } from 'ioredis';
import { Pool } from 'undici';
import { generateCorpus } from '../src/modules/sources/messenger/index.ts';
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
import { positive, withSliceOptions } from './support/options.ts';
import { cpuSecondsOf } from './support/process-cpu.ts';
import { createBenchStore, DEFAULT_POSTGRES_ADMIN_URL, type StoreKind } from './support/store.ts';

const SERVERS_ENTRY = fileURLToPath(new URL('./support/servers.ts', import.meta.url));
const GOALS = { sharePercent: 25, limiterCostPercent: 15, scaling: 1.6, rssGrowthPercent: 10 };
const SETTLE_MS = 2_000;
const ACCOUNT_PATH = '/service/account/';

interface ScaleOptions {
  adminUrl: string;
  redisUrl: string;
  duration: number;
  slice: number;
  warmup: number;
  connections: number;
  rounds: number;
  throughput: boolean;
  soakMinutes: number;
  soakClients: number;
}

function parseOptions(args: string[]): ScaleOptions {
  const program = withSliceOptions(new Command('npm run bench -- scale'), 'configuration')
    .description(
      'throughput of 1 and 2 API processes, SQLite and PostgreSQL + Redis, limiter cost; then a soak of mixed traffic',
    )
    .option(
      '--admin-url <url>',
      'PostgreSQL admin connection (fresh databases are created and dropped)',
      process.env.DRAGNET_BENCH_DATABASE_URL || DEFAULT_POSTGRES_ADMIN_URL,
    )
    .option('--redis-url <url>', 'Redis for the counts', process.env.DRAGNET_BENCH_REDIS_URL || DEFAULT_REDIS_URL)
    .option('--connections <n>', 'autocannon connections per API process', positive('--connections', true, 1000), 10)
    .option(
      '--rounds <n>',
      'repeat the throughput table on fresh servers; figures are medians',
      positive('--rounds', true, 20),
      1,
    )
    .option('--no-throughput', 'skip the throughput table')
    .option(
      '--soak-minutes <m>',
      'length of the soak; 0 skips it',
      (raw) => (raw === '0' ? 0 : positive('--soak-minutes', false, 24 * 60)(raw)),
      20,
    )
    .option(
      '--soak-clients <n>',
      'concurrent clients of the soak (spread over the two API processes)',
      positive('--soak-clients', true, 1000),
      16,
    )
    .exitOverride((error) => process.exit(error.exitCode === 0 ? 0 : 2))
    .allowExcessArguments(false);
  program.parse(args, { from: 'user' });
  return program.opts<ScaleOptions>();
}

interface Deployment {
  urls: string[];
  pids: number[];
  headers: Record<string, string>;
  login: { email: string; password: string };
}

/**
 * A fresh store with `processes` Dragnet API processes on it (`servers.ts dragnet`, then
 * `dragnet-peer`s), the Bench organization's limits raised for `slugs`, logged in; the access
 * token works on every process. Undone when `scope` closes.
 */
async function deploy(
  scope: CleanupScope,
  options: ScaleOptions,
  setup: {
    kind: StoreKind;
    redis: boolean;
    limiter: boolean;
    processes: number;
    slugs: string[];
    label: string;
    prepare?: Parameters<typeof prepareOrganization>[2];
  },
): Promise<Deployment> {
  const store = await createBenchStore(setup.kind, scope, options.adminUrl);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOST: '127.0.0.1',
    PORT: '0',
    DRAGNET_LOG_LEVEL: 'warn',
    ...store.env,
  };
  for (const name of ['DRAGNET_REDIS_URL', 'DRAGNET_RATE_LIMITS']) delete env[name];
  if (setup.kind === 'sqlite') delete env.DRAGNET_DATABASE_URL;
  if (setup.redis) env.DRAGNET_REDIS_URL = options.redisUrl;
  if (!setup.limiter) env.DRAGNET_RATE_LIMITS = 'off';
  const orgId = await prepareOrganization(env, setup.slugs, setup.prepare);
  if (setup.redis)
    scope.defer(`delete the Redis counters of organization ${orgId}`, () =>
      deleteRedisCounters(options.redisUrl, orgId),
    );

  const first = await startChildServer({
    entry: SERVERS_ENTRY,
    args: ['dragnet'],
    env,
    scope,
    label: `Dragnet (${setup.label})`,
  });
  const peers = [];
  for (let i = 1; i < setup.processes; i++) {
    peers.push(
      await startChildServer({
        entry: SERVERS_ENTRY,
        args: ['dragnet-peer'],
        env,
        scope,
        label: `Dragnet (${setup.label}) #${i + 1}`,
      }),
    );
  }
  const { email, password, headers } = await logInBenchUser(first);
  const servers = [first, ...peers];
  for (const server of servers) {
    // The probe proves the deployment is what it claims: the raised limits, or no limiter.
    const probe = await httpJson(`${server.url}${ACCOUNT_PATH}`, { headers });
    if (probe.status !== 200)
      throw new Error(`GET ${ACCOUNT_PATH} on ${server.url} answered ${probe.status} ${JSON.stringify(probe.body)}`);
    const limit = probe.headers.get('x-ratelimit-account-limit');
    if (limit !== (setup.limiter ? String(RAISED_LIMIT) : null))
      throw new Error(`${setup.label}: X-RateLimit-Account-Limit is ${limit}`);
  }
  return { urls: servers.map((s) => s.url), pids: servers.map((s) => s.pid), headers, login: { email, password } };
}

// ---------------------------------------------------------------------------------------------
// 1. Throughput

interface Config {
  name: string;
  processes: number;
  target: { url: string | string[]; headers?: Record<string, string> };
  connections: number;
  /** The server processes under load, for their CPU time. */
  pids: number[];
}

/** CPU seconds used, by whom, while a configuration was under load. */
interface CpuUse {
  servers: number;
  loadGenerator: number;
  redis: number;
}

/** Measures the CPU time `work` costs the servers, this process (autocannon) and Redis. */
async function withCpu<T>(pids: number[], redisPid: number | null, work: () => Promise<T>): Promise<[T, CpuUse]> {
  const servers = () => pids.reduce((sum, pid) => sum + cpuSecondsOf(pid), 0);
  const own = () => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1e6;
  };
  const redis = () => (redisPid === null ? Number.NaN : cpuSecondsOf(redisPid));
  const before = { servers: servers(), loadGenerator: own(), redis: redis() };
  const result = await work();
  return [
    result,
    { servers: servers() - before.servers, loadGenerator: own() - before.loadGenerator, redis: redis() - before.redis },
  ];
}

const CONFIG_NAMES = {
  bare: 'bare Fastify',
  sqliteOn: 'SQLite, limiter on',
  sqliteOff: 'SQLite, limiter off',
  pgOn: 'PostgreSQL + Redis, limiter on',
  pgOff: 'PostgreSQL + Redis, limiter off',
  pgTwo: 'PostgreSQL + Redis, limiter on, 2 API processes',
} as const;
type ConfigKey = keyof typeof CONFIG_NAMES;

interface RoundResult {
  figures: Record<ConfigKey, LoadFigures>;
  /** CPU cores in use during the measured slices (CPU seconds / measured seconds). */
  cores: Record<ConfigKey, CpuUse>;
}

async function throughputRound(options: ScaleOptions, round: number, redisPid: number | null): Promise<RoundResult> {
  const scope = new CleanupScope();
  try {
    const n = options.connections;
    const slugs = ['account'];
    const bare = await startChildServer({
      entry: SERVERS_ENTRY,
      args: ['bare'],
      env: { ...process.env, HOST: '127.0.0.1' },
      scope,
      label: 'bare Fastify',
    });
    const sqliteOn = await deploy(scope, options, {
      kind: 'sqlite',
      redis: false,
      limiter: true,
      processes: 1,
      slugs,
      label: 'SQLite',
    });
    const sqliteOff = await deploy(scope, options, {
      kind: 'sqlite',
      redis: false,
      limiter: false,
      processes: 1,
      slugs,
      label: 'SQLite, limiter off',
    });
    const pgOn = await deploy(scope, options, {
      kind: 'postgres',
      redis: true,
      limiter: true,
      processes: 2,
      slugs,
      label: 'PostgreSQL + Redis',
    });
    const pgOff = await deploy(scope, options, {
      kind: 'postgres',
      redis: true,
      limiter: false,
      processes: 1,
      slugs,
      label: 'PostgreSQL + Redis, limiter off',
    });
    const one = (d: Deployment) => ({
      target: { url: `${d.urls[0]}${ACCOUNT_PATH}`, headers: d.headers },
      pids: [d.pids[0]!],
    });
    const configs: Record<ConfigKey, Config> = {
      bare: {
        name: CONFIG_NAMES.bare,
        processes: 1,
        target: { url: `${bare.url}/bare` },
        pids: [bare.pid],
        connections: n,
      },
      sqliteOn: { name: CONFIG_NAMES.sqliteOn, processes: 1, ...one(sqliteOn), connections: n },
      sqliteOff: { name: CONFIG_NAMES.sqliteOff, processes: 1, ...one(sqliteOff), connections: n },
      pgOn: { name: CONFIG_NAMES.pgOn, processes: 1, ...one(pgOn), connections: n },
      pgOff: { name: CONFIG_NAMES.pgOff, processes: 1, ...one(pgOff), connections: n },
      pgTwo: {
        name: CONFIG_NAMES.pgTwo,
        processes: 2,
        target: { url: pgOn.urls.map((u) => `${u}${ACCOUNT_PATH}`), headers: pgOn.headers },
        pids: pgOn.pids,
        connections: 2 * n,
      },
    };
    const keys = Object.keys(configs) as ConfigKey[];
    for (const key of keys) await loadSlice(configs[key].target, configs[key].connections, options.warmup);

    const collected = Object.fromEntries(keys.map((key) => [key, [] as LoadFigures[]])) as Record<
      ConfigKey,
      LoadFigures[]
    >;
    const cpu = Object.fromEntries(keys.map((key) => [key, { servers: 0, loadGenerator: 0, redis: 0 }])) as Record<
      ConfigKey,
      CpuUse
    >;
    const slices = Math.max(1, Math.round(options.duration / options.slice));
    for (let i = 0; i < slices; i++) {
      // Each slice starts the rotation one place further (and each round elsewhere again).
      const shift = (i + round) % keys.length;
      for (const key of [...keys.slice(shift), ...keys.slice(0, shift)]) {
        const config = configs[key];
        const [figures, used] = await withCpu(config.pids, redisPid, () =>
          loadSlice(config.target, config.connections, options.slice),
        );
        if (figures.requests === 0)
          process.stdout.write(`  note: ${config.name}: no request completed in slice ${i + 1}\n`);
        collected[key].push(figures);
        for (const part of ['servers', 'loadGenerator', 'redis'] as const) cpu[key][part] += used[part];
      }
    }
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const measured = slices * options.slice;
    return {
      figures: Object.fromEntries(keys.map((key) => [key, combineSlices(collected[key], options.slice)])) as Record<
        ConfigKey,
        LoadFigures
      >,
      cores: Object.fromEntries(
        keys.map((key) => [
          key,
          {
            servers: cpu[key].servers / measured,
            loadGenerator: cpu[key].loadGenerator / measured,
            redis: cpu[key].redis / measured,
          },
        ]),
      ) as Record<ConfigKey, CpuUse>,
    };
  } finally {
    await scope.close();
  }
}

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

const pct = (value: number) => `${value.toFixed(1)}%`;
const loadText = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');

/** Redis's process id, when it runs on this host (its CPU time is then read from /proc). */
async function redisPid(url: string): Promise<number | null> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    const pid = Number(/process_id:(\d+)/.exec(await redis.info('server'))?.[1]);
    return Number.isInteger(pid) && cpuSecondsOf(pid) >= 0 ? pid : null;
  } finally {
    await redis.quit();
  }
}

async function throughput(options: ScaleOptions): Promise<boolean> {
  const rounds: RoundResult[] = [];
  const budgetMs = options.rounds * (6 * (options.warmup + options.duration) + 300) * 1000;
  const redis = await redisPid(options.redisUrl);
  await withDeadline(
    budgetMs,
    (async () => {
      for (let round = 1; round <= options.rounds; round++) {
        process.stdout.write(
          `${options.rounds > 1 ? `round ${round}/${options.rounds}: ` : ''}starting the servers, then loading them in turn ...\n`,
        );
        rounds.push(await throughputRound(options, round, redis));
      }
    })(),
  );
  const keys = Object.keys(CONFIG_NAMES) as ConfigKey[];
  const figures = Object.fromEntries(
    keys.map((key) => [key, medianFigures(rounds.map((r) => r.figures[key]))]),
  ) as Record<ConfigKey, LoadFigures>;
  const cores = (key: ConfigKey, part: keyof CpuUse) => median(rounds.map((r) => r.cores[key][part]));
  // Ratios per round, then their median: each round's configurations ran at the same moments.
  const perRound = (of: (r: Record<ConfigKey, LoadFigures>) => number) => {
    const values = rounds.map((r) => of(r.figures));
    return { value: median(values), rounds: values };
  };
  const share = (key: ConfigKey) => perRound((r) => (r[key].rps / r.bare.rps) * 100);
  const cost = (on: ConfigKey, off: ConfigKey) => perRound((r) => (1 - r[on].rps / r[off].rps) * 100);
  const scaling = perRound((r) => r.pgTwo.rps / r.pgOn.rps);
  const costs: Partial<Record<ConfigKey, ReturnType<typeof cost>>> = {
    sqliteOn: cost('sqliteOn', 'sqliteOff'),
    pgOn: cost('pgOn', 'pgOff'),
  };
  const roundsOf = (values: number[], format: (v: number) => string) =>
    values.length > 1 ? ` (rounds: ${values.map(format).join(', ')})` : '';

  const rows = [
    [
      'configuration',
      'processes',
      'connections',
      'req/s',
      'p50 ms',
      'p99 ms',
      'of bare',
      'limiter cost',
      'vs 1 process',
      'CPU: servers / autocannon / Redis',
      'server µs/req',
    ],
  ];
  for (const key of keys) {
    const f = figures[key];
    rows.push([
      CONFIG_NAMES[key],
      key === 'pgTwo' ? '2' : '1',
      String(key === 'pgTwo' ? 2 * options.connections : options.connections),
      int(f.rps),
      ms(f.p50),
      ms(f.p99),
      key === 'bare' ? '' : pct(share(key).value),
      costs[key] === undefined ? '' : pct(costs[key].value),
      key === 'pgTwo' ? `×${scaling.value.toFixed(2)}` : '',
      `${cores(key, 'servers').toFixed(2)} / ${cores(key, 'loadGenerator').toFixed(2)} / ${cores(key, 'redis').toFixed(2)}`,
      // What a request costs the servers: when it stays the same with two processes, the
      // throughput is bounded by the cores, not by anything the processes share.
      ((cores(key, 'servers') / f.rps) * 1e6).toFixed(1),
    ]);
  }
  process.stdout.write(
    `\n${table(rows)}\n(CPU in cores while loaded, and the servers' CPU time per request; req/s, latencies and CPU are medians over rounds, ratios medians of each round's ratio)\nload average after: ${loadText()}\n\n`,
  );

  const goals = [
    {
      text: `PostgreSQL + Redis, 1 API process: ${pct(share('pgOn').value)} of bare Fastify${roundsOf(share('pgOn').rounds, pct)} (goal >= ${GOALS.sharePercent}%)`,
      ok: share('pgOn').value >= GOALS.sharePercent,
    },
    {
      text: `limiter cost, PostgreSQL + Redis: ${pct(costs.pgOn!.value)}${roundsOf(costs.pgOn!.rounds, pct)} (goal <= ${GOALS.limiterCostPercent}%)`,
      ok: costs.pgOn!.value <= GOALS.limiterCostPercent,
    },
    {
      text: `limiter cost, SQLite: ${pct(costs.sqliteOn!.value)}${roundsOf(costs.sqliteOn!.rounds, pct)} (goal <= ${GOALS.limiterCostPercent}%)`,
      ok: costs.sqliteOn!.value <= GOALS.limiterCostPercent,
    },
    {
      text: `2 API processes: ×${scaling.value.toFixed(2)} the requests/s of one${roundsOf(scaling.rounds, (v) => `×${v.toFixed(2)}`)} (goal >= ×${GOALS.scaling})`,
      ok: scaling.value >= GOALS.scaling,
    },
  ];
  for (const goal of goals) process.stdout.write(`scale: ${goal.text}: ${goal.ok ? 'PASS' : 'FAIL'}\n`);
  return goals.every((goal) => goal.ok);
}

// ---------------------------------------------------------------------------------------------
// 2. Soak

interface Operation {
  name: string;
  weight: number;
  method: 'GET' | 'POST';
  path: string;
  body?: () => unknown;
}

const SEARCH_TERMS = [
  'fresh logs',
  'acme-bank.com',
  'password',
  'globex.com',
  'combo AND valid',
  'stealer NOT cookies',
  'пароли',
  'initech.io',
];

/** The mix each client draws from (weights in percent); webhook writes and logins run beside it. */
const MIX: Operation[] = [
  { name: 'account', weight: 30, method: 'GET', path: '/service/account/' },
  { name: 'organization', weight: 8, method: 'GET', path: '/service/organization/' },
  { name: 'usage', weight: 5, method: 'GET', path: '/service/get_usage_limits/' },
  { name: 'channels', weight: 10, method: 'GET', path: '/service/messenger-channels/?page=1&page_size=50' },
  { name: 'categories', weight: 5, method: 'GET', path: '/service/messenger-channels-categories/' },
  {
    name: 'search',
    weight: 12,
    method: 'POST',
    path: '/service/messenger-search-create/',
    body: () => ({ query: SEARCH_TERMS[Math.floor(Math.random() * SEARCH_TERMS.length)] }),
  },
  { name: 'history', weight: 10, method: 'GET', path: '/service/messenger-search-history/?page=1&page_size=20' },
  { name: 'templates', weight: 7, method: 'GET', path: '/service/alert_system_setting_get_template_list/' },
  { name: 'webhooks', weight: 7, method: 'GET', path: '/service/alert_system_setting_get_webhook_list/' },
  { name: 'rules', weight: 6, method: 'GET', path: '/service/alert_system_alert_get_alert_rule_list/' },
];
const SOAK_SLUGS = [
  'account',
  'organization',
  'get_usage_limits',
  'messenger-channels',
  'messenger-channels-categories',
  'messenger-search-create',
  'messenger-search-history',
  'alert_system_setting_get_template_list',
  'alert_system_setting_get_webhook_list',
  'alert_system_setting_create_webhook',
  'alert_system_setting_delete_webhook',
  'alert_system_alert_get_alert_rule_list',
];
const LOGIN_EVERY_MS = 5_000;
const RSS_EVERY_MS = 5_000;

function rssBytes(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : Number.NaN;
}

interface Minute {
  latencies: number[];
  /** The latencies of each operation of the mix. */
  byOperation: Map<string, number[]>;
  failures: Map<string, number>;
  /** Per process, the RSS samples taken in the minute. */
  rss: number[][];
}

function percentileOf(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

async function soak(options: ScaleOptions): Promise<boolean> {
  const scope = new CleanupScope();
  try {
    process.stdout.write(
      `soak: two API processes on PostgreSQL + Redis, ${options.soakClients} clients, ${options.soakMinutes} min ...\n`,
    );
    const deployment = await deploy(scope, options, {
      kind: 'postgres',
      redis: true,
      limiter: true,
      processes: 2,
      slugs: SOAK_SLUGS,
      label: 'soak',
      // The demo corpus: 24 channels, 3,000 messages.
      prepare: async (container) => {
        await container.corpus.write(
          generateCorpus({
            seed: 2026,
            channels: 24,
            messages: 3000,
            start: new Date(Date.now() - 60 * 86_400_000),
            spanDays: 60,
          }),
        );
      },
    });
    const pools = deployment.urls.map(
      (url) => new Pool(url, { connections: Math.ceil(options.soakClients / deployment.urls.length) + 2 }),
    );
    scope.defer('close the soak clients', () => Promise.all(pools.map((pool) => pool.close())));
    const started = Date.now();
    const endAt = started + options.soakMinutes * 60_000;
    const minutes: Minute[] = [];
    const minute = () => {
      const index = Math.floor((Date.now() - started) / 60_000);
      while (minutes.length <= index)
        minutes.push({
          latencies: [],
          byOperation: new Map(),
          failures: new Map(),
          rss: deployment.pids.map(() => []),
        });
      return minutes[index]!;
    };
    async function send(
      pool: Pool,
      name: string,
      method: 'GET' | 'POST' | 'DELETE',
      path: string,
      body?: unknown,
    ): Promise<unknown> {
      const begun = performance.now();
      const response = await pool.request({
        method,
        path,
        headers: {
          ...(name === 'login' ? {} : deployment.headers),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.body.text();
      const bucket = minute();
      const took = performance.now() - begun;
      bucket.latencies.push(took);
      const ofOperation = bucket.byOperation.get(name);
      if (ofOperation) ofOperation.push(took);
      else bucket.byOperation.set(name, [took]);
      if (response.statusCode >= 300) {
        const key = `${name} ${response.statusCode}`;
        bucket.failures.set(key, (bucket.failures.get(key) ?? 0) + 1);
        return null;
      }
      return text ? (JSON.parse(text) as unknown) : null;
    }

    const totalWeight = MIX.reduce((sum, op) => sum + op.weight, 0);
    const draw = () => {
      let r = Math.random() * totalWeight;
      for (const op of MIX) if ((r -= op.weight) < 0) return op;
      return MIX[0]!;
    };
    const reader = async (client: number) => {
      const pool = pools[client % pools.length]!;
      while (Date.now() < endAt) {
        const op = draw();
        await send(pool, op.name, op.method, op.path, op.body?.());
      }
    };
    // One client keeps creating and deleting a webhook (at most 10 per organization).
    const writer = async () => {
      let i = 0;
      while (Date.now() < endAt) {
        const pool = pools[i++ % pools.length]!;
        const created = (await send(pool, 'webhook create', 'POST', '/service/alert_system_setting_create_webhook/', {
          name: `soak ${i}`,
          url: `https://hooks.example.com/soak/${i}`,
        })) as { id?: number } | null;
        if (created?.id)
          await send(pool, 'webhook delete', 'DELETE', `/service/alert_system_setting_delete_webhook/${created.id}/`);
      }
    };
    // A login every few seconds, on each process in turn (argon2: its CPU weighs on the rest).
    const logins = async () => {
      for (let i = 0; Date.now() < endAt; i++) {
        await send(pools[i % pools.length]!, 'login', 'POST', '/token/', deployment.login);
        await new Promise((resolve) => setTimeout(resolve, Math.min(LOGIN_EVERY_MS, Math.max(0, endAt - Date.now()))));
      }
    };
    const sampler = setInterval(() => {
      const bucket = minute();
      deployment.pids.forEach((pid, i) => bucket.rss[i]!.push(rssBytes(pid)));
    }, RSS_EVERY_MS);
    scope.defer('stop the RSS sampler', () => clearInterval(sampler));
    // A minute's RSS is the median of its samples: one sample lands before or after a GC at random.
    const rssOf = (m: Minute) => m.rss.map((samples) => median(samples));
    const mb = (bytes: number[]) => bytes.map((b) => `${(b / 2 ** 20).toFixed(1)} MB`).join(' / ');
    let printed = 0;
    const progress = setInterval(() => {
      for (; printed < minutes.length - 1; printed++) {
        const done = minutes[printed]!;
        process.stdout.write(
          `  minute ${printed + 1}: ${int(done.latencies.length / 60)} req/s, p50 ${ms(percentileOf(done.latencies, 50))} ms, p99 ${ms(percentileOf(done.latencies, 99))} ms, ` +
            `RSS ${mb(rssOf(done))}${done.failures.size ? `, non-2xx: ${[...done.failures].map(([k, v]) => `${k} ×${v}`).join(', ')}` : ''}\n`,
        );
      }
    }, 10_000);
    scope.defer('stop the progress lines', () => clearInterval(progress));
    await Promise.all([...Array.from({ length: options.soakClients - 1 }, (_, i) => reader(i)), writer(), logins()]);
    clearInterval(sampler);
    clearInterval(progress);
    // The last, partial minute is not compared: it may hold a few seconds only.
    const full = minutes.filter((_, i) => i < options.soakMinutes);
    const first = full[0]!;
    const last = full[full.length - 1]!;
    const [rssFirst, rssLast] = [rssOf(first), rssOf(last)];
    const growth = deployment.pids.map((_, i) => (rssLast[i]! / rssFirst[i]! - 1) * 100);
    const failures = full.reduce((sum, m) => sum + [...m.failures.values()].reduce((a, b) => a + b, 0), 0);
    const requests = full.reduce((sum, m) => sum + m.latencies.length, 0);
    const rows = [
      ['operation', 'minute 1 requests', 'p50 ms', 'p99 ms', `minute ${full.length} requests`, 'p50 ms', 'p99 ms'],
    ];
    const line = (label: string, start: number[], end: number[]) => [
      label,
      int(start.length),
      ms(percentileOf(start, 50)),
      ms(percentileOf(start, 99)),
      int(end.length),
      ms(percentileOf(end, 50)),
      ms(percentileOf(end, 99)),
    ];
    rows.push(line('all', first.latencies, last.latencies));
    for (const name of [...first.byOperation.keys()].sort())
      rows.push(line(name, first.byOperation.get(name)!, last.byOperation.get(name) ?? []));
    process.stdout.write(
      `\nsoak: ${options.soakMinutes} min, ${int(requests)} requests (${int(requests / (options.soakMinutes * 60))} req/s), ${failures} non-2xx; load average ${loadText()}\n` +
        `${table(rows)}\n` +
        `  RSS (median of the minute's samples, per API process): minute 1 ${mb(rssFirst)}, minute ${full.length} ${mb(rssLast)}\n`,
    );
    const ok = growth.every((g) => g < GOALS.rssGrowthPercent) && failures === 0;
    process.stdout.write(
      `scale: soak RSS growth ${growth.map((g) => `${g >= 0 ? '+' : ''}${g.toFixed(1)}%`).join(' / ')} (goal < ${GOALS.rssGrowthPercent}% per process), ` +
        `${failures} non-2xx responses (goal 0): ${ok ? 'PASS' : 'FAIL'}\n`,
    );
    return ok;
  } finally {
    await scope.close();
  }
}

export async function run(args: string[]): Promise<void> {
  const options = parseOptions(args);
  for (const [what, url] of [
    ['postgres', options.adminUrl],
    ['redis', options.redisUrl],
  ] as const) {
    const problem = await reachable(what, url);
    if (problem) throw new Error(`${what} is not reachable at ${url}: ${problem}`);
  }
  const cpuList = cpus();
  process.stdout.write(
    `scale: ${cpuList.length} CPU(s) ${cpuList[0]?.model.trim() ?? ''}, Node ${process.version}; GET ${ACCOUNT_PATH}, ` +
      `${options.connections} connections per API process, ${options.warmup} s warm-up, ${options.duration} s per configuration in ${options.slice} s slices; ` +
      `load average before: ${loadText()}\n`,
  );
  let pass = true;
  if (options.throughput) pass = (await throughput(options)) && pass;
  if (options.soakMinutes > 0) pass = (await soak(options)) && pass;
  if (!pass) process.exitCode = 1;
}
