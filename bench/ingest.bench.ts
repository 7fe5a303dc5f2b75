/**
 * `npm run bench -- ingest [--store sqlite|postgres|both] [--messages n] [--paths list] [--runs n] [--prof dir]`
 *
 * Is a messenger file loaded as fast through every real path as the in-process bench path?
 * A deterministic corpus (generateCorpus, as `npm run bench -- search` writes it) is written
 * once as a JSON Lines file in the collector format (docs/ingest.md), then loaded into a fresh
 * store per path:
 *   in-process  container.corpus.write of the same messages, already in memory (the bench path)
 *   cli         `node bin/dragnet.js ingest messenger <file>`, a child process
 *   http        `POST /ingest/messenger/` with the file as the body, to a `dragnet serve --no-worker` child
 *   inbox       the file renamed into <data>/inbox/messenger/ of a `dragnet worker` child
 *               (the inbox collector every second, the scheduler polling every 2 s as by default)
 * For each: the wall time (the CLI's from spawn to exit, start-up included; the inbox's from the
 * rename to the report in done/), the CPU seconds of the Dragnet process doing the work (this
 * process's for in-process, GNU time's for the CLI, /proc for the server and the worker, idle
 * ones, measured once they settle after start-up) and, on PostgreSQL, of the database's backends
 * (sampled from /proc: bench/support/process-cpu.ts). A write's follow-up in the background
 * (PostgreSQL: the word statistics and the bitmaps of newly frequent words) is counted in every
 * path, as the CLI's exit waits for it: in-process until the container is closed, the server and
 * the worker until they and the backends are idle again (their wall time stops at the answer or
 * the report). msg per CPU-second is compared with the in-process path's on the same store.
 * Goal (issue #24): every path >= 80% of in-process per Dragnet CPU-second; exit code 1 when
 * missed.
 * --prof <dir> runs the children with node --cpu-prof, writing their profiles there.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import {
  copyFileSync,
  createReadStream,
  createWriteStream,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { loadavg } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { Command, InvalidArgumentError } from 'commander';
import { loadConfig } from '../src/config.ts';
import { createContainer } from '../src/container.ts';
import { corpusChannels, generateCorpus, type ChannelBatch } from '../src/modules/sources/messenger/index.ts';
import { stopperOf } from './support/child-server.ts';
import { CleanupScope } from './support/cleanup.ts';
import { httpJson } from './support/http.ts';
import { int } from './support/load.ts';
import { positive } from './support/options.ts';
import { cpuSecondsOf, ownCpuSeconds, sampleBackendCpu } from './support/process-cpu.ts';
import { createBenchStore, type BenchStore, type StoreKind } from './support/store.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const GOAL_RATIO = 0.8;
const SEED = 24;
const CHANNELS = 500;
const PATHS = ['in-process', 'cli', 'http', 'inbox'] as const;
type IngestPath = (typeof PATHS)[number];
const GNU_TIME = '/usr/bin/time';
const CPU_MARK = 'dragnet-bench-cpu';
const PASSWORD = 'Bench-Password-42!';
const say = (line: string) => process.stdout.write(line + '\n');

interface Options {
  store: 'sqlite' | 'postgres' | 'both';
  messages: number;
  paths: IngestPath[];
  runs: number;
  prof?: string;
}

interface Figures {
  path: IngestPath;
  store: StoreKind;
  added: number;
  wallSeconds: number;
  dragnetCpu: number;
  /** CPU seconds of the store's PostgreSQL backends; null on SQLite. */
  backendCpu: number | null;
}

/** A path's run: what it added, the CPU seconds of the Dragnet process doing it, and the timed part's figures. */
type PathRun = (store: BenchStore, file: string, context: RunContext) => Promise<Timed<{ added: number; cpu: number }>>;

type Timed<T> = T & { wallSeconds: number; backendCpu: number | null };

interface RunContext {
  scope: CleanupScope;
  /** The PostgreSQL database of the store, whose backends' CPU is counted; null on SQLite. */
  database: string | null;
  batches: ChannelBatch[];
  nodeArgs: string[];
}

const parsePaths = (raw: string): IngestPath[] => {
  const paths = raw.split(',').map((p) => p.trim());
  for (const p of paths)
    if (!(PATHS as readonly string[]).includes(p))
      throw new InvalidArgumentError(`--paths takes a list of: ${PATHS.join(', ')}`);
  return paths as IngestPath[];
};

function corpus(messages: number): ChannelBatch[] {
  return [
    ...generateCorpus({
      seed: SEED,
      channels: CHANNELS,
      messages,
      start: new Date('2025-01-01T00:00:00Z'),
      spanDays: 365,
      batchSize: 1000,
    }),
  ];
}

/** The corpus in the collector's JSON Lines format, as a collector would write it. */
async function writeJsonLines(batches: ChannelBatch[], file: string): Promise<void> {
  const categories = new Map(corpusChannels(SEED, CHANNELS).map((c) => [c.username, c.category]));
  const out = createWriteStream(file);
  for (const { channel, messages } of batches) {
    const head = { username: channel.username, title: channel.title, category: categories.get(channel.username!) };
    let chunk = '';
    for (const m of messages) {
      chunk +=
        JSON.stringify({
          channel: head,
          message_id: m.messageId,
          user_id: m.userId,
          date: new Date(m.date).toISOString(),
          text: m.text,
          links: m.links,
          media_type: m.mediaType,
          file_name: m.fileName,
        }) + '\n';
    }
    if (!out.write(chunk)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

/** Runs `node bin/dragnet.js …args` to the end, untimed; its stdout. */
function dragnet(args: string[], env: NodeJS.ProcessEnv): string {
  const result = spawnSync(process.execPath, ['bin/dragnet.js', ...args], { cwd: repoRoot, env, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`dragnet ${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  return result.stdout;
}

const childEnv = (store: BenchStore, extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
  ...process.env,
  ...store.env,
  DRAGNET_LOG_LEVEL: 'warn',
  ...extra,
});

/** Starts a long-running Dragnet child (serve, worker), stopped with the scope. */
function startDragnet(args: string[], env: NodeJS.ProcessEnv, context: RunContext): ChildProcess {
  const child = spawn(process.execPath, [...context.nodeArgs, 'bin/dragnet.js', ...args], {
    cwd: repoRoot,
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  context.scope.defer(`stop dragnet ${args[0]} (pid ${child.pid})`, stopperOf(child));
  return child;
}

async function poll(what: string, ready: () => boolean | Promise<boolean>, timeoutMs: number, everyMs = 50) {
  const deadline = Date.now() + timeoutMs;
  while (!(await ready())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/**
 * Waits until a child is idle after `after` (its start-up, or an ingest's follow-up in the
 * background): under 20 ms of CPU in half a second, its own and `alsoCpu`'s (the database's
 * backends, which run the follow-up's ANALYZE while the child waits).
 */
async function settled(pid: number, after: string, alsoCpu = () => 0): Promise<void> {
  const used = () => cpuSecondsOf(pid) + alsoCpu();
  let last = used();
  await poll(
    `pid ${pid} idle after ${after}`,
    () => {
      const now = used();
      if (!Number.isFinite(now)) throw new Error(`pid ${pid} exited during ${after}`);
      const idle = now - last < 0.02;
      last = now;
      return idle;
    },
    60_000,
    500,
  );
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject).listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });

/** What a measured path reads while it runs. */
interface Meter {
  /** CPU seconds this process spent sampling the backends, which in-process work leaves out. */
  samplingCpu(): number;
  /** The backends' CPU seconds so far (0 without PostgreSQL). */
  backendCpu(): number;
  /** Ends the wall time here (the path's answer); otherwise it ends with the work. */
  answered(): void;
}

/** Runs the part of a path that is measured: its wall time, and its backends' CPU on PostgreSQL. */
async function timed<T>(context: RunContext, work: (meter: Meter) => Promise<T>): Promise<Timed<T>> {
  const backends = context.database ? sampleBackendCpu(context.database) : null;
  const started = performance.now();
  let ended: number | undefined;
  const result = await work({
    samplingCpu: () => backends?.ownCpu() ?? 0,
    backendCpu: () => backends?.used() ?? 0,
    answered: () => (ended ??= performance.now()),
  });
  const wallSeconds = ((ended ?? performance.now()) - started) / 1000;
  return { ...result, wallSeconds, backendCpu: backends?.stop() ?? null };
}

const inProcess: PathRun = async (store, _file, context) => {
  const container = await createContainer(loadConfig(childEnv(store)));
  let closing: Promise<void> | undefined;
  const close = () => (closing ??= container.close());
  context.scope.defer('close container', close);
  return timed(context, async (meter) => {
    const before = ownCpuSeconds() - meter.samplingCpu();
    const totals = await container.corpus.write(context.batches);
    meter.answered();
    // Closing waits for the write's follow-up in the background, as the CLI's exit does.
    await close();
    return { added: totals.added, cpu: ownCpuSeconds() - meter.samplingCpu() - before };
  });
};

const cli: PathRun = async (store, file, context) => {
  if (!existsSync(GNU_TIME)) throw new Error(`the cli path reads the child's CPU time from ${GNU_TIME}`);
  const env = childEnv(store);
  dragnet(['migrate'], env);
  return timed(context, async () => {
    const args = [...context.nodeArgs, 'bin/dragnet.js', '--json', 'ingest', 'messenger', file];
    const child = spawn(GNU_TIME, ['-f', `${CPU_MARK} %U %S`, process.execPath, ...args], {
      cwd: repoRoot,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    const [code] = (await once(child, 'exit')) as [number | null];
    if (code !== 0) throw new Error(`dragnet ingest exited ${code}: ${stderr}`);
    const times = new RegExp(`${CPU_MARK} ([\\d.]+) ([\\d.]+)`).exec(stderr);
    if (!times) throw new Error(`no CPU time from ${GNU_TIME}: ${stderr}`);
    const summary = JSON.parse(stdout) as { messages_added: number };
    return { added: summary.messages_added, cpu: Number(times[1]) + Number(times[2]) };
  });
};

/** A `dragnet serve --no-worker` child on the store, and the Authorization header of a system account. */
async function startServer(store: BenchStore, context: RunContext) {
  const port = await freePort();
  const env = childEnv(store, { HOST: '127.0.0.1', PORT: String(port) });
  const email = 'ops@bench.dragnet.test';
  dragnet(['user', 'create', '--org', 'Operators', '--email', email, '--password', PASSWORD, '--system'], env);
  const server = startDragnet(['serve', '--no-worker'], env, context);
  const url = `http://127.0.0.1:${port}`;
  const answers = () =>
    httpJson(`${url}/healthz`).then(
      (r) => r.status === 200,
      () => false,
    );
  await poll('the server answering /healthz', answers, 60_000, 100);
  const login = await httpJson(`${url}/token/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: PASSWORD }),
  });
  const access = (login.body as { access?: string }).access;
  if (!access) throw new Error(`login failed: ${login.status} ${JSON.stringify(login.body)}`);
  await settled(server.pid!, 'start-up');
  return { pid: server.pid!, url, authorization: `Bearer ${access}` };
}

const http: PathRun = async (store, file, context) => {
  const server = await startServer(store, context);
  return timed(context, async (meter) => {
    const before = cpuSecondsOf(server.pid);
    const response = await fetch(`${server.url}/ingest/messenger/?name=bench.jsonl`, {
      method: 'POST',
      headers: { authorization: server.authorization, 'content-type': 'application/x-ndjson' },
      body: Readable.toWeb(createReadStream(file)) as ReadableStream,
      duplex: 'half',
      signal: AbortSignal.timeout(3_600_000),
    } as RequestInit);
    const answer = (await response.json()) as { accepted?: number };
    if (response.status !== 200)
      throw new Error(`POST /ingest/messenger/ answered ${response.status}: ${JSON.stringify(answer)}`);
    meter.answered();
    await settled(server.pid, 'the ingest', meter.backendCpu);
    const cpu = cpuSecondsOf(server.pid) - before;
    return { added: answer.accepted ?? 0, cpu };
  });
};

const inbox: PathRun = async (store, file, context) => {
  const collectors = path.join(store.dataDir, 'collectors.json');
  const folder = path.join(store.dataDir, 'inbox', 'messenger');
  mkdirSync(folder, { recursive: true });
  writeFileSync(collectors, JSON.stringify({ inbox: { interval_seconds: 1 } }));
  const env = childEnv(store, { DRAGNET_COLLECTORS_FILE: collectors });
  dragnet(['migrate'], env);
  const worker = startDragnet(['worker'], env, context);
  await settled(worker.pid!, 'start-up');
  // Copied in under a name the inbox skips, then renamed: the inbox never sees half a file.
  const partial = path.join(folder, '.bench.jsonl.part');
  copyFileSync(file, partial);
  const done = path.join(folder, 'done');
  const report = () => (existsSync(done) ? readdirSync(done).find((name) => name.endsWith('.report.json')) : undefined);
  return timed(context, async (meter) => {
    const before = cpuSecondsOf(worker.pid!);
    renameSync(partial, path.join(folder, 'bench.jsonl'));
    await poll('the inbox filing the file under done/', () => report() !== undefined, 3_600_000);
    meter.answered();
    await settled(worker.pid!, 'the ingest', meter.backendCpu);
    const cpu = cpuSecondsOf(worker.pid!) - before;
    const tally = JSON.parse(readFileSync(path.join(done, report()!), 'utf8')) as { added: number };
    return { added: tally.added, cpu };
  });
};

const RUNS: Record<IngestPath, PathRun> = { 'in-process': inProcess, cli, http, inbox };

async function measurePath(
  kind: StoreKind,
  ingestPath: IngestPath,
  file: string,
  context: Omit<RunContext, 'scope' | 'database'>,
): Promise<Figures> {
  const scope = new CleanupScope();
  try {
    const store = await createBenchStore(kind, scope);
    const database = kind === 'postgres' ? new URL(store.env.DRAGNET_DATABASE_URL!).pathname.slice(1) : null;
    const run = await RUNS[ingestPath](store, file, { ...context, scope, database });
    const expected = context.batches.reduce((n, b) => n + b.messages.length, 0);
    if (run.added !== expected) throw new Error(`${ingestPath} on ${kind} added ${run.added} of ${expected} messages`);
    return {
      path: ingestPath,
      store: kind,
      added: run.added,
      wallSeconds: run.wallSeconds,
      dragnetCpu: run.cpu,
      backendCpu: run.backendCpu,
    };
  } finally {
    await scope.close();
  }
}

const perSecond = (messages: number, seconds: number | null) =>
  seconds === null || !(seconds > 0) ? '-' : int(messages / seconds);
const ratio = (value: number, reference: number | undefined) =>
  reference === undefined ? '-' : `${Math.round((value / reference) * 100)}%`;

function report(figures: Figures[]): boolean {
  say(
    '\n| path | store | msg/s (wall) | Dragnet CPU s | msg per Dragnet CPU-s | vs in-process | PostgreSQL backends CPU s | msg per CPU-s, both | vs in-process |',
  );
  say('|---|---|---|---|---|---|---|---|---|');
  let missed = false;
  for (const f of figures) {
    const reference = figures.find((r) => r.store === f.store && r.path === 'in-process');
    const own = f.added / f.dragnetCpu;
    const both = f.backendCpu === null ? null : f.added / (f.dragnetCpu + f.backendCpu);
    const referenceBoth =
      reference && reference.backendCpu !== null
        ? reference.added / (reference.dragnetCpu + reference.backendCpu)
        : undefined;
    const referenceOwn = reference && reference.added / reference.dragnetCpu;
    if (referenceOwn !== undefined && own < GOAL_RATIO * referenceOwn) missed = true;
    say(
      `| ${f.path} | ${f.store} | ${perSecond(f.added, f.wallSeconds)} | ${f.dragnetCpu.toFixed(1)} | ${int(own)} | ${ratio(own, referenceOwn)} | ` +
        `${f.backendCpu === null ? '-' : f.backendCpu.toFixed(1)} | ${both === null ? '-' : int(both)} | ${both === null ? '-' : ratio(both, referenceBoth)} |`,
    );
  }
  return missed;
}

const commit = () => {
  const head = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repoRoot, encoding: 'utf8' }).stdout.trim();
  const dirty = spawnSync('git', ['status', '--porcelain', '--untracked-files=no'], {
    cwd: repoRoot,
    encoding: 'utf8',
  });
  return `${head}${dirty.stdout.trim() ? ' + uncommitted changes' : ''}`;
};

const loadText = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');

export async function run(argv: string[]): Promise<void> {
  const options = new Command('ingest')
    .option('--store <store>', 'sqlite, postgres or both', 'both')
    .option('--messages <n>', 'messages in the file', positive('--messages', true, 1_000_000), 200_000)
    .option('--paths <list>', `comma-separated, of: ${PATHS.join(', ')}`, parsePaths, [...PATHS])
    .option('--runs <n>', 'runs of each path; the one of median CPU time is shown', positive('--runs', true, 20), 1)
    .option('--prof <dir>', "write the children's CPU profiles (node --cpu-prof) to this folder")
    .parse(argv, { from: 'user' })
    .opts<Options>();
  if (!['sqlite', 'postgres', 'both'].includes(options.store))
    throw new Error('--store must be sqlite, postgres or both');
  const kinds: StoreKind[] = options.store === 'both' ? ['sqlite', 'postgres'] : [options.store];
  const nodeArgs = options.prof ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(options.prof)}`] : [];

  const scope = new CleanupScope();
  try {
    const work = await createBenchStore('sqlite', scope);
    const file = path.join(work.dataDir, 'corpus.jsonl');
    const batches = corpus(options.messages);
    await writeJsonLines(batches, file);
    // Builds dist/ when src/ changed, outside every timed run.
    dragnet(['--help'], process.env);
    say(
      `${int(options.messages)} messages (${(statSync(file).size / 1e6).toFixed(0)} MB of JSON Lines), code ${commit()}, ` +
        `Node ${process.version}, load average ${loadText()} at start`,
    );
    const figures: Figures[] = [];
    for (const kind of kinds) {
      const runs = new Map<IngestPath, Figures[]>(options.paths.map((p) => [p, []]));
      // Round by round, every path once per round: a load that rises or falls meanwhile (other
      // work on the machine stretches CPU time too) weighs on every path alike.
      for (let round = 0; round < options.runs; round++) {
        for (const ingestPath of options.paths) {
          const f = await measurePath(kind, ingestPath, file, { batches, nodeArgs });
          say(
            `  ${kind} ${ingestPath}: ${int(f.added)} messages in ${f.wallSeconds.toFixed(1)} s, ` +
              `Dragnet ${f.dragnetCpu.toFixed(1)} CPU s${f.backendCpu === null ? '' : `, backends ${f.backendCpu.toFixed(1)} CPU s`}, load ${loadText()}`,
          );
          runs.get(ingestPath)!.push(f);
        }
      }
      // The run of the median Dragnet CPU time stands for the path.
      for (const pathRuns of runs.values())
        figures.push(pathRuns.sort((a, b) => a.dragnetCpu - b.dragnetCpu)[Math.floor((pathRuns.length - 1) / 2)]!);
    }
    const missed = report(figures);
    say(
      `\nload average ${loadText()} at end; goal: every path >= ${GOAL_RATIO * 100}% of in-process per Dragnet CPU-second${missed ? ' (missed)' : ' (met)'}`,
    );
    if (missed) process.exitCode = 1;
  } finally {
    await scope.close();
  }
}
