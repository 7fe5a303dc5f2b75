/**
 * `npm run bench -- replica [--messages N] [--ingest-messages N] [--runs N]`
 *
 * Read replicas (DRAGNET_DATABASE_READ_URLS, docs/performance.md "Read replicas"): a PostgreSQL
 * primary and a real streaming replica of it started for the run (test/support/replica.ts:
 * initdb, pg_basebackup -R, the machine's PostgreSQL binaries, a free port each), a corpus of
 * --messages (generateCorpus, fixed seed) written through container.corpus.write, then the same
 * searches timed in this process through two containers on that store: one reading on the
 * primary, one with the replica as its read URL. Both with the store idle, then while a child
 * process ingests --ingest-messages more into the primary (as `dragnet ingest` would). Prints
 * p50/p95 per target, how many statements each container's reads ran where (a search on the
 * replica container that found the replica behind ran on the primary), the replica's lag while
 * the ingest ran, and the load average. Everything it starts is removed again.
 */
import { loadavg, cpus } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Command, InvalidArgumentError, Option } from 'commander';
import { loadConfig } from '../src/config.ts';
import { createContainer, type Container } from '../src/container.ts';
import { generateCorpus, type ChannelBatch } from '../src/modules/sources/messenger/index.ts';
import { startReplicatedServer } from '../test/support/replica.ts';
import { createTestStoreLocation } from '../test/support/test-store.ts';
import { CleanupScope } from './support/cleanup.ts';
import { ingestInChild } from './support/search-load.ts';

const SEED = 424_242;
const CHANNELS = 500;
const CORPUS_START = new Date('2025-01-01T00:00:00Z');
const SPAN_DAYS = 365;
const QUERIES = [
  'zorbex-payroll.com',
  'billing42@globex.com AND password',
  'password',
  'fresh AND logs',
  'combo OR логи',
];

interface Options {
  messages: number;
  ingestMessages: number;
  runs: number;
  chunk: number;
}

const whole = (label: string, min: number) => (raw: string) => {
  const value = Number(raw.replace(/[_,]/g, ''));
  if (!Number.isInteger(value) || value < min)
    throw new InvalidArgumentError(`${label} must be a whole number ≥ ${min}`);
  return value;
};

function parseOptions(args: string[]): Options {
  const command = new Command('replica')
    .addOption(
      new Option('--messages <n>', 'messages in the corpus').argParser(whole('--messages', 1000)).default(200_000),
    )
    .addOption(
      new Option('--ingest-messages <n>', 'messages the concurrent ingest writes into the primary')
        .argParser(whole('--ingest-messages', 1000))
        .default(100_000),
    )
    .addOption(
      new Option('--runs <n>', 'rounds of the query set per target with the store idle')
        .argParser(whole('--runs', 1))
        .default(10),
    )
    .addOption(
      new Option('--chunk <n>', 'messages per corpus.write() call').argParser(whole('--chunk', 100)).default(5000),
    )
    .exitOverride();
  command.parse(args, { from: 'user' });
  return command.opts<Options>();
}

const percentile = (values: number[], p: number) => {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
};
const ms = (value: number) => `${value.toFixed(1)} ms`;
const load = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');

export async function run(args: string[]): Promise<void> {
  const options = parseOptions(args);
  const say = (line: string) => process.stdout.write(`${line}\n`);
  const scope = new CleanupScope();
  try {
    say(
      `replica bench: ${options.messages} messages, ${options.ingestMessages} ingested during the searches; ${cpus().length} cores`,
    );
    say(`load average at start: ${load()}`);
    const started = await startReplicatedServer();
    if ('unavailable' in started) throw new Error(`no replica: ${started.unavailable}`);
    scope.defer('replicated server', () => started.remove());
    const location = await createTestStoreLocation({ adminUrl: started.primaryUrl });
    scope.defer('store', () => location.drop());
    const env = { ...location.env, DRAGNET_LOG_LEVEL: 'warn' };
    const onPrimary = await createContainer(loadConfig(env));
    scope.defer('primary container', () => onPrimary.close());
    const onReplica = await createContainer(
      loadConfig({ ...env, DRAGNET_DATABASE_READ_URLS: started.replica.urlOf(location.databaseUrl!) }),
    );
    scope.defer('replica container', () => onReplica.close());

    const t0 = performance.now();
    let written = 0;
    let chunk: ChannelBatch[] = [];
    let inChunk = 0;
    for (const batch of generateCorpus({
      seed: SEED,
      channels: CHANNELS,
      messages: options.messages,
      start: CORPUS_START,
      spanDays: SPAN_DAYS,
      batchSize: 1000,
    })) {
      chunk.push(batch);
      inChunk += batch.messages.length;
      if (inChunk >= options.chunk) {
        await onPrimary.corpus.write(chunk);
        written += inChunk;
        chunk = [];
        inChunk = 0;
      }
    }
    if (inChunk) await onPrimary.corpus.write(chunk);
    written += inChunk;
    say(`corpus: ${written} messages in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    // The replica replays the load before the idle figures.
    await started.replica.caughtUp();

    const user = await onPrimary.users.create({
      orgName: 'Replica Bench',
      email: 'bench@replica.example',
      password: 'correct horse battery staple',
    });
    const context = { orgId: user.org_id, userId: user.id };
    const timeOne = async (container: Container, query: string) => {
      const start = performance.now();
      await container.search.search(context, { query, page_size: 10 });
      return performance.now() - start;
    };
    const targets = [
      { name: 'primary', container: onPrimary },
      { name: 'replica', container: onReplica },
    ];
    // Warm-up: each query once on each.
    for (const { container } of targets) for (const query of QUERIES) await timeOne(container, query);

    const idle = new Map(targets.map(({ name }) => [name, [] as number[]]));
    for (let round = 0; round < options.runs; round++)
      for (const query of QUERIES)
        for (const { name, container } of targets) idle.get(name)!.push(await timeOne(container, query));
    const idleLoad = load();

    const readsBefore = { ...onReplica.store.reads.reads() };
    const busy = new Map(targets.map(({ name }) => [name, [] as number[]]));
    const lag: number[] = [];
    let ingesting = true;
    const ingestStart = performance.now();
    const ingest = ingestInChild(env, {
      shape: { seed: SEED, channels: CHANNELS, start: CORPUS_START, spanDays: SPAN_DAYS },
      count: options.ingestMessages,
      round: 1,
      chunk: options.chunk,
    }).finally(() => (ingesting = false));
    const loadSamples: string[] = [];
    const sampler = setInterval(() => {
      loadSamples.push(loadavg()[0]!.toFixed(2));
      void onReplica.store.reads.check().then((status) => {
        if (status[0]?.lagBytes != null) lag.push(status[0].lagBytes);
      });
    }, 1000);
    try {
      while (ingesting)
        for (const query of QUERIES)
          for (const { name, container } of targets) busy.get(name)!.push(await timeOne(container, query));
    } finally {
      clearInterval(sampler);
    }
    const ingested = await ingest;
    const ingestSeconds = (performance.now() - ingestStart) / 1000;
    const readsAfter = onReplica.store.reads.reads();
    const moved = Object.fromEntries(
      Object.entries(readsAfter).map(([target, n]) => [target, n - (readsBefore[target] ?? 0)]),
    );

    say('');
    say(`search p50 / p95 (container.search.search, page_size 10, queries: ${QUERIES.join(' | ')})`);
    say('| reads on | store idle p50 | idle p95 | during ingest p50 | during p95 | searches during ingest |');
    say('| --- | --- | --- | --- | --- | --- |');
    for (const { name } of targets) {
      const a = idle.get(name)!;
      const b = busy.get(name)!;
      say(
        `| ${name} | ${ms(percentile(a, 50))} | ${ms(percentile(a, 95))} | ${ms(percentile(b, 50))} | ${ms(percentile(b, 95))} | ${b.length} |`,
      );
    }
    say('');
    say(
      `ingest during the searches: ${ingested.messages} messages in ${ingestSeconds.toFixed(1)} s (${Math.round(ingested.messages / ingestSeconds)}/s)`,
    );
    say(`statements of the replica container's reads during the ingest, by target: ${JSON.stringify(moved)}`);
    say(
      `replica lag during the ingest (sampled each second): p50 ${Math.round(percentile(lag, 50) / 1024)} KiB, max ${Math.round(Math.max(0, ...lag) / 1024)} KiB`,
    );
    say(
      `load average: at start ${idleLoad.split(' ')[0]} after the idle runs (1/5/15 min: ${idleLoad}); during the ingest (1 min, each second): ${loadSamples.join(' ')}; at end ${load()}`,
    );
  } finally {
    await scope.close();
  }
}
