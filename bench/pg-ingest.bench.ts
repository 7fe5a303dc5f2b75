/**
 * `npm run bench -- pg-ingest [--store postgres|sqlite] [--corpus generated|repetitive]
 *   [--messages N] [--window N] [--chunk N]`
 *
 * Issue #24: does PostgreSQL ingest reach 15,000 msg/s in-process, and does the rate hold as
 * the table grows? A fresh store loads N messages (1,000,000) through `container.corpus.write`
 * in chunks as `dragnet ingest` hands them over; printed: msg/s of the whole load, of its first
 * and of its last `--window` messages, with the CPU-seconds of this process and of the
 * PostgreSQL processes in each, and the load average. Generating the corpus is not timed.
 */
import { loadavg } from 'node:os';
import { Command } from 'commander';
import { CleanupScope } from './support/cleanup.ts';
import { benchCorpus, measureIngestRates, type CorpusKind, type WindowRate } from './support/ingest-rates.ts';
import { positive } from './support/options.ts';
import { createBenchContainer, type StoreKind } from './support/store.ts';

const TARGET_MSG_PER_S = 15_000;

interface Options {
  store: StoreKind;
  corpus: CorpusKind;
  messages: number;
  window: number;
  chunk: number;
}

const oneOf =
  <T extends string>(label: string, values: readonly T[]) =>
  (raw: string): T => {
    if (!values.includes(raw as T)) throw new Error(`${label} must be one of ${values.join(', ')}`);
    return raw as T;
  };

const count = (n: number) => Math.round(n).toLocaleString('en-US');

// Messages per CPU-second of both sides: what the rate would be if the writer had the CPU to
// itself, as node and the server take turns on each batch; comparable on a busy machine.
const figures = (r: WindowRate) =>
  `${r.label.padEnd(6)} ${String(r.messages).padStart(9)} msg  ${count(r.msgPerS).padStart(7)} msg/s` +
  `  node CPU ${r.nodeCpuS.toFixed(1)} s` +
  (r.serverCpuS === null
    ? ''
    : `  PostgreSQL CPU ${r.serverCpuS.toFixed(1)} s  ${count(r.messages / (r.nodeCpuS + r.serverCpuS))} msg per CPU-second`);

export async function run(args: string[]): Promise<void> {
  const options = new Command('pg-ingest')
    .option('--store <kind>', 'postgres or sqlite', oneOf('--store', ['postgres', 'sqlite'] as const), 'postgres')
    .option(
      '--corpus <kind>',
      'generated (the search corpus) or repetitive (short chatter from 50 words)',
      oneOf('--corpus', ['generated', 'repetitive'] as const),
      'generated',
    )
    .option('--messages <n>', 'messages to load', positive('--messages', true, 100_000_000), 1_000_000)
    .option('--window <n>', 'size of the first and last windows', positive('--window', true, 100_000_000), 100_000)
    .option('--chunk <n>', 'messages per corpus.write() call', positive('--chunk', true, 1_000_000), 50_000)
    .parse(args, { from: 'user' })
    .opts<Options>();

  const scope = new CleanupScope();
  try {
    const { store, container } = await createBenchContainer(options.store, scope);
    process.stdout.write(
      `pg-ingest: ${options.messages.toLocaleString('en-US')} ${options.corpus} messages into ${store.location}, ` +
        `${options.chunk.toLocaleString('en-US')} per write()\n`,
    );
    const loadBefore = loadavg();
    const rates = await measureIngestRates(container, benchCorpus(options.corpus, options.messages), {
      chunk: options.chunk,
      window: options.window,
      onChunk: (written) => process.stderr.write(`\r${written.toLocaleString('en-US')} written`),
    });
    process.stderr.write('\n');
    for (const rate of [rates.total, rates.first, rates.last]) process.stdout.write(`${figures(rate)}\n`);
    const load = (values: number[]) => values.map((v) => v.toFixed(2)).join(' ');
    process.stdout.write(`load average before ${load(loadBefore)}, after ${load(loadavg())}\n`);
    const slowest = Math.min(rates.total.msgPerS, rates.first.msgPerS, rates.last.msgPerS);
    if (options.store === 'postgres' && slowest < TARGET_MSG_PER_S) {
      process.stdout.write(`target ≥ ${TARGET_MSG_PER_S.toLocaleString('en-US')} msg/s in every window: missed\n`);
      process.exitCode = 1;
    }
  } finally {
    await scope.close();
  }
}
