/**
 * `npm run bench -- rules [--rules N] [--messages N] [--naive-sample N] [--store sqlite|postgres]`
 *
 * Time to evaluate N active messenger rules (default 100,000) against N new messages (default
 * 100,000) with the percolator (one scan, Aho–Corasick over the rules' anchor terms, full query
 * to confirm) versus the naive loop of one search per rule, measured on a sample of rules and
 * extrapolated. Both must find the same hits for the sampled rules. Targets: percolator < 60 s,
 * ≥ 20× the naive loop.
 */
import { Command } from 'commander';
import { seededRandom } from '../src/modules/sources/common/seeded-random.ts';
import { generateCorpus } from '../src/modules/sources/messenger/index.ts';
import type { ChannelBatch } from '../src/modules/sources/messenger/index.ts';
import { messengerSource } from '../src/modules/sources/messenger/messenger.source.ts';
import type { BatchRule } from '../src/modules/sources/kit/source.ts';
import { CleanupScope } from './support/cleanup.ts';
import { createBenchContainer, type StoreKind } from './support/store.ts';

const WINDOW_START = Date.UTC(2026, 0, 1);
const SPAN_DAYS = 7;
const ASSETS = 200_000;

const asset = (i: number) => `asset${i}-corp.com`;
const brand = (i: number) => `brandx${i}`;

/** Messages of the generated corpus, some mentioning assets and brands that rules watch. */
function* corpusWithAssets(messages: number): Generator<ChannelBatch> {
  const random = seededRandom(99);
  for (const batch of generateCorpus({
    seed: 7,
    channels: 500,
    messages,
    start: new Date(WINDOW_START),
    spanDays: SPAN_DAYS,
  })) {
    yield {
      ...batch,
      messages: batch.messages.map((m) => {
        const roll = random();
        if (roll < 0.3) return { ...m, text: `${m.text} leak for ${asset(Math.floor(random() * ASSETS))}` };
        if (roll < 0.4) return { ...m, text: `${m.text} ${brand(Math.floor(random() * ASSETS))} accounts` };
        return m;
      }),
    };
  }
}

/** A realistic rule mix: an asset each, some with context words, alternatives or exclusions. */
function ruleQueries(count: number): string[] {
  const random = seededRandom(123);
  return Array.from({ length: count }, (_, i) => {
    const roll = random();
    if (roll < 0.5) return asset(i);
    if (roll < 0.7) return `${asset(i)} AND (logs OR password)`;
    if (roll < 0.85) return `${asset(i)} OR ${brand(i)}`;
    if (roll < 0.95) return `"${brand(i)} accounts" -test`;
    return `${brand(i)} AND логи`;
  });
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

export async function run(argv: string[]): Promise<void> {
  const options = new Command('rules')
    .option('--rules <n>', 'active messenger rules', (v) => Number(v), 100_000)
    .option('--messages <n>', 'new messages', (v) => Number(v), 100_000)
    .option('--naive-sample <n>', 'rules timed with the naive loop (then extrapolated)', (v) => Number(v), 1000)
    .option('--store <kind>', 'sqlite or postgres', 'sqlite')
    .parse(argv, { from: 'user' })
    .opts<{ rules: number; messages: number; naiveSample: number; store: StoreKind }>();

  const scope = new CleanupScope();
  try {
    const { container } = await createBenchContainer(options.store, scope);
    const context = container.sourceContext;

    let started = performance.now();
    await container.corpus.write(corpusWithAssets(options.messages));
    process.stdout.write(
      `rules: ${options.messages} new messages written in ${seconds(performance.now() - started)} (${options.store})\n`,
    );

    const rules: BatchRule[] = ruleQueries(options.rules).map((query, i) => ({
      ruleId: i + 1,
      args: { query },
      since: WINDOW_START - 1,
    }));
    const until = WINDOW_START + SPAN_DAYS * 86_400_000;

    started = performance.now();
    const percolated = await messengerSource.matchMany!(context, rules, until, 10_000);
    const percolatorMs = performance.now() - started;
    const rulesWithHits = [...percolated.values()].filter((r) => r.total > 0).length;
    const hits = [...percolated.values()].reduce((n, r) => n + r.total, 0);
    process.stdout.write(
      `percolator: ${options.rules} rules × ${options.messages} messages in ${seconds(percolatorMs)} (${rulesWithHits} rules with hits, ${hits} hits)\n`,
    );

    const sample = rules
      .filter((_, i) => i % Math.max(1, Math.floor(rules.length / options.naiveSample)) === 0)
      .slice(0, options.naiveSample);
    started = performance.now();
    let mismatches = 0;
    for (const rule of sample) {
      const naive = await messengerSource.match(context, rule.args, { since: rule.since, until }, 10_000);
      const keys = (r: { hits: { key: string }[] }) =>
        r.hits
          .map((h) => h.key)
          .sort()
          .join(',');
      const batch = percolated.get(rule.ruleId) ?? { hits: [], total: 0 };
      if (naive.total !== batch.total || keys(naive) !== keys(batch)) {
        mismatches++;
        if (mismatches <= 5)
          process.stdout.write(
            `MISMATCH rule ${rule.ruleId} "${String(rule.args.query)}": naive ${naive.total}, percolator ${batch.total}\n`,
          );
      }
    }
    const naiveSampleMs = performance.now() - started;
    const naiveMs = (naiveSampleMs / sample.length) * rules.length;
    process.stdout.write(
      `naive loop: ${sample.length} rules in ${seconds(naiveSampleMs)} → ${seconds(naiveMs)} for ${rules.length} (extrapolated)\n`,
    );
    const speedup = naiveMs / percolatorMs;
    const underTarget = percolatorMs < 60_000;
    process.stdout.write(
      [
        `same matches on the ${sample.length} sampled rules: ${mismatches === 0 ? 'yes' : `NO (${mismatches} differ)`}`,
        `rules: percolator ${seconds(percolatorMs)} (target < 60 s): ${underTarget ? 'PASS' : 'FAIL'}; ${speedup.toFixed(1)}× the naive loop (target ≥ 20×): ${speedup >= 20 ? 'PASS' : 'FAIL'}`,
        '',
      ].join('\n'),
    );
    if (mismatches || !underTarget || speedup < 20) process.exitCode = 1;
  } finally {
    await scope.close();
  }
}
