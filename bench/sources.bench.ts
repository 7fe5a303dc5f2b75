/**
 * `npm run bench -- sources [--store sqlite|postgres] [--records N] [--only a,b] [--watched N] [--observed N]`
 *
 * Issue #13's figures, in one run:
 *  1. the ingest rate of every source's ingester: each bench/sources/<name>.ts writes N synthetic
 *     records in the source's real format, and that source's `dragnet ingest` ingester loads them
 *     into a fresh store (records/s); then the same files again, which must add nothing;
 *  2. the phishing candidate generation + match time for 10,000 watched domains against 1M newly
 *     observed domains (target < 60 s, ≥ 20× one domain at a time).
 */
import { mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Command } from 'commander';
import { findIngester } from '../src/modules/sources/index.ts';
import { CleanupScope } from './support/cleanup.ts';
import { positive } from './support/options.ts';
import { createBenchContainer, type StoreKind } from './support/store.ts';

/** What bench/sources/<name>.ts exports as `benchSource`. */
export interface BenchSource {
  source: string;
  ingester: string;
  format: string;
  /** What a record is called in the output (messages, posts, certificates…). */
  unit: string;
  /** Writes `count` synthetic records in the real format under `dir`; returns the files. */
  writeInput(dir: string, count: number): Promise<string[]>;
}

const sourcesDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'sources');

async function benchSources(): Promise<BenchSource[]> {
  const found: BenchSource[] = [];
  for (const file of readdirSync(sourcesDir)
    .filter((name) => name.endsWith('.ts'))
    .sort()) {
    const module = (await import(pathToFileURL(path.join(sourcesDir, file)).href)) as { benchSource?: BenchSource };
    if (module.benchSource) found.push(module.benchSource);
  }
  return found;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

export async function run(argv: string[]): Promise<void> {
  const options = new Command('sources')
    .option('--store <kind>', 'sqlite or postgres', 'sqlite')
    .option('--records <n>', 'records generated per source', positive('--records', true, 1e8), 100_000)
    .option('--only <names>', 'comma-separated sources to measure (default: all)')
    .option('--watched <n>', 'phishing: watched domains', positive('--watched', true, 1e6), 10_000)
    .option('--observed <n>', 'phishing: newly observed domains', positive('--observed', true, 1e8), 1_000_000)
    .option('--skip-phishing-match', 'leave out the phishing candidate generation + match figure')
    .parse(argv, { from: 'user' })
    .opts<{
      store: StoreKind;
      records: number;
      only?: string;
      watched: number;
      observed: number;
      skipPhishingMatch?: boolean;
    }>();
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const only = options.only?.split(',').map((name) => name.trim());
  const failures: string[] = [];
  const scope = new CleanupScope();
  try {
    const { store, container } = await createBenchContainer(options.store, scope);
    const context = container.sourceContext;
    out(
      `sources bench on ${options.store} (${store.location}), ${options.records.toLocaleString('en')} records per source`,
    );
    out('source            ingester          format       records/s    time      added     again: added');
    for (const bench of await benchSources()) {
      if (only && !only.includes(bench.source)) continue;
      const ingester = findIngester(bench.ingester);
      if (!ingester) throw new Error(`bench/sources: no ingester named ${bench.ingester}`);
      const dir = path.join(store.dataDir, 'bench-input', bench.source);
      mkdirSync(dir, { recursive: true });
      const files = await bench.writeInput(dir, options.records);
      const started = performance.now();
      const first = await ingester.run(context, files, { format: bench.format });
      const elapsed = performance.now() - started;
      const again = await ingester.run(context, files, { format: bench.format });
      const rate = first.tally.records / (elapsed / 1000);
      out(
        `${bench.source.padEnd(18)}${bench.ingester.padEnd(18)}${bench.format.padEnd(13)}${Math.round(rate).toLocaleString('en').padStart(9)}    ${seconds(elapsed).padStart(8)}  ${String(first.tally.added).padStart(8)}  ${String(again.tally.added).padStart(8)}   (${bench.unit})`,
      );
      if (first.failed || first.tally.rejected > 0)
        failures.push(
          `${bench.source}: ${first.tally.rejected} rejected, ${first.tally.errors[0]?.reason ?? 'input failed'}`,
        );
      if (again.tally.added !== 0) failures.push(`${bench.source}: re-ingest added ${again.tally.added}`);
    }

    if (!options.skipPhishingMatch && (!only || only.includes('phishing'))) {
      const { benchPhishingMatch } = await import('./sources/phishing-match.ts');
      // A store of its own: the domains the ingest step stored would be hits too.
      const { container: matchContainer } = await createBenchContainer(options.store, scope);
      const report = await benchPhishingMatch({
        watched: options.watched,
        observed: options.observed,
        context: matchContainer.sourceContext,
        out,
      });
      for (const line of report.lines) out(line);
      failures.push(...report.failures);
    }
    if (failures.length) {
      out(`FAILED: ${failures.join('; ')}`);
      process.exitCode = 1;
    }
  } finally {
    await scope.close();
  }
}
