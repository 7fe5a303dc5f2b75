import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { Container } from '../../src/container.ts';
import { corpusChannels, generateCorpus, type ChannelBatch } from '../../src/modules/sources/messenger/index.ts';

/**
 * Concurrent searches while messages are ingested: does a search hold up the writer, or the
 * writer a search? Clients send searches back to back through HTTP while a child process
 * writes more messages into the same store, as `dragnet ingest` would. (Written from the
 * benchmark process itself, the writes kept its event loop from reading the responses: the
 * SQLite driver resolves every await of a write at once.)
 */

export interface CorpusShape {
  seed: number;
  channels: number;
  start: Date;
  spanDays: number;
}

/**
 * `count` more messages for the benchmark's own channels: a corpus of another seed, its
 * channels mapped onto the originals by position and its message ids moved past any written
 * before (a channel's message id is unique).
 */
export function* moreMessages(shape: CorpusShape, count: number, round: number): Generator<ChannelBatch> {
  const originals = corpusChannels(shape.seed, shape.channels);
  for (const batch of generateCorpus({ ...shape, seed: shape.seed + round, messages: count, batchSize: 1000 })) {
    const position = Number(/_(\d+)$/.exec(batch.channel.username ?? '')![1]) - 1;
    const original = originals[position]!;
    yield {
      channel: { ...batch.channel, username: original.username, title: original.title, category: original.category },
      messages: batch.messages.map((m) => ({ ...m, messageId: m.messageId + round * 100_000_000 })),
    };
  }
}

/**
 * Runs `ingestMore` in a child process (search-ingest.child.ts) on the store `env` names and
 * returns its figures.
 */
export function ingestInChild(
  env: NodeJS.ProcessEnv,
  input: { shape: CorpusShape; count: number; round: number; chunk: number },
): Promise<IngestRun> {
  const script = fileURLToPath(new URL('./search-ingest.child.ts', import.meta.url));
  const child = spawn(process.execPath, [...process.execArgv, script, JSON.stringify(input)], {
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`the ingest child exited with code ${code}`));
      resolve(JSON.parse(output.trim().split('\n').pop()!) as IngestRun);
    });
  });
}

export interface IngestRun {
  messages: number;
  writeMs: number;
  cpuMs: number;
}

const cpuMs = () => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
};

/** Writes the batches in transactions of `chunk` messages; time and CPU of this process inside write(). */
export async function ingestMore(
  container: Container,
  batches: Iterable<ChannelBatch>,
  chunk: number,
): Promise<IngestRun> {
  let writeMs = 0;
  let cpu = 0;
  let messages = 0;
  let pending: ChannelBatch[] = [];
  let inPending = 0;
  const flush = async () => {
    const t = performance.now();
    const c = cpuMs();
    const totals = await container.corpus.write(pending);
    cpu += cpuMs() - c;
    writeMs += performance.now() - t;
    if (totals.added !== inPending) throw new Error(`corpus.write added ${totals.added} of ${inPending} messages`);
    messages += inPending;
    pending = [];
    inPending = 0;
  };
  for (const batch of batches) {
    pending.push(batch);
    inPending += batch.messages.length;
    if (inPending >= chunk) await flush();
  }
  if (inPending) await flush();
  return { messages, writeMs, cpuMs: cpu };
}

export interface LoadSample {
  label: string;
  ms: number;
}

/**
 * `clients` loops, each sending the searches in turn (each client starting at another one)
 * until `until()` says stop; every latency is kept with its query's label.
 */
export async function searchLoad(options: {
  clients: number;
  searches: { label: string; send: () => Promise<unknown> }[];
  until: () => boolean;
}): Promise<LoadSample[]> {
  const samples: LoadSample[] = [];
  await Promise.all(
    Array.from({ length: options.clients }, async (_, client) => {
      for (let i = client; !options.until(); i++) {
        const search = options.searches[i % options.searches.length]!;
        const t = performance.now();
        await search.send().catch((error: unknown) => {
          const cause =
            error instanceof Error ? (error.cause as { code?: string; message?: string } | undefined) : undefined;
          throw new Error(
            `${search.label} (client ${client}): ${error instanceof Error ? error.message : String(error)}${cause ? ` (${cause.code ?? cause.message})` : ''}`,
          );
        });
        samples.push({ label: search.label, ms: performance.now() - t });
      }
    }),
  );
  return samples;
}
