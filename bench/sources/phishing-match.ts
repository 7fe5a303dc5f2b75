import { DAY_MS } from '../../src/lib/clock.ts';
import { findSource, type SourceContext } from '../../src/modules/sources/index.ts';
import { parseDomainName, type DomainName } from '../../src/modules/sources/common/domains/domain-name.ts';
import { createLookalikeIndex } from '../../src/modules/sources/phishing/lookalike-index.ts';
import { writeObservedDomains } from '../../src/modules/sources/common/domains/observed-domains.ts';
import { syntheticDomain } from './phishing.ts';
import { seededRandom } from '../../src/modules/sources/common/seeded-random.ts';

/**
 * Issue #13's phishing figure: candidate generation + matching for many watched domains against
 * a day's newly observed domains, through the code the hourly tick runs (matchMany), compared
 * with matching one watched domain at a time.
 *
 * - Watched domains: invented brands (one to three syllables and a word, a third hyphenated,
 *   common suffixes), all distinct.
 * - Observed domains: the NRD bench feed (bench/sources/phishing.ts) with 3% planted lookalikes
 *   of random watched domains, made here by hand (a swapped or dropped letter, a doubled one,
 *   a lookalike glyph, brand-keyword, brand in a subdomain, another suffix), so every planted
 *   name must be found.
 * - In memory: the lookalike index over all watched domains (generation) and one pass over the
 *   observed names (the scan). Through the store (when a context is given): the observed
 *   domains written once with the ingester's writer, then the source's matchMany, as the tick
 *   calls it (generation + reading the window page by page + hits).
 * - One at a time: a sample of watched domains, each with its own index over the whole observed
 *   set in memory (what `match` does per rule, without even its reading of the store); the mean
 *   times the watched count estimates the rule-by-rule tick.
 */

const TARGET_MS = 60_000;
const TARGET_SPEEDUP = 20;
const PLANTED_SHARE = 0.03;
// One-at-a-time sample: stop after this many domains or this much time, whichever comes first.
const SAMPLE_DOMAINS = 100;
const SAMPLE_MS = 30_000;
const WRITE_BATCH = 5000;

const BRAND_SYLLABLES = [
  'ac',
  'me',
  'nor',
  'vex',
  'tri',
  'lum',
  'sta',
  'gen',
  'cor',
  'pa',
  'zo',
  'fi',
  'bel',
  'ka',
  'ro',
  'din',
  'mer',
  'sol',
  'tek',
  'vi',
  'ra',
  'on',
  'is',
  'qua',
];
const BRAND_WORDS = [
  'bank',
  'pay',
  'mail',
  'shop',
  'air',
  'energy',
  'health',
  'capital',
  'insure',
  'tel',
  'soft',
  'cloud',
  'games',
  'media',
  'foods',
  'motors',
];
const BRAND_SUFFIXES = ['com', 'com', 'com', 'com', 'net', 'org', 'de', 'co.uk', 'fr', 'io', 'nl', 'com.au'];

/** Watched domain `i`: realistic brand names, distinct by a base-36 tail where needed. */
function watchedDomain(i: number, random: () => number): string {
  const pick = <T>(values: readonly T[]) => values[Math.floor(random() * values.length)]!;
  const syllables = Array.from({ length: 1 + Math.floor(random() * 3) }, () => pick(BRAND_SYLLABLES)).join('');
  const label = random() < 0.33 ? `${syllables}-${pick(BRAND_WORDS)}` : `${syllables}${pick(BRAND_WORDS)}`;
  return `${label}${i.toString(36)}.${pick(BRAND_SUFFIXES)}`;
}

const GLYPHS: Record<string, string> = { o: '0', l: '1', i: 'l', m: 'rn', a: 'à', e: 'é', u: 'ü' };

/** A lookalike of `domain` as a phisher registers it, made without the generator under test. */
function plantLookalike(domain: string, random: () => number): string {
  const dot = domain.indexOf('.');
  const label = domain.slice(0, dot);
  const suffix = domain.slice(dot + 1);
  const at = 1 + Math.floor(random() * (label.length - 2));
  switch (Math.floor(random() * 7)) {
    case 0:
      return `${label.slice(0, at)}${label[at + 1]}${label[at]}${label.slice(at + 2)}.${suffix}`;
    case 1:
      return `${label.slice(0, at)}${label.slice(at + 1)}.${suffix}`;
    case 2:
      return `${label.slice(0, at)}${label[at]}${label.slice(at)}.${suffix}`;
    case 3: {
      const glyph = [...label].findIndex((char) => GLYPHS[char]);
      return glyph === -1
        ? `${label}-login.${suffix}`
        : `${label.slice(0, glyph)}${GLYPHS[label[glyph]!]}${label.slice(glyph + 1)}.${suffix}`;
    }
    case 4:
      return `${label}-secure-${Math.floor(random() * 1000)}.${suffix === 'com' ? 'net' : 'com'}`;
    case 5:
      return `${domain}.account-verify-${Math.floor(random() * 1000)}.info`;
    default:
      return `${label}.${suffix === 'com' ? 'shop' : 'com'}`;
  }
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const count = (n: number) => n.toLocaleString('en');

export async function benchPhishingMatch(options: {
  watched: number;
  observed: number;
  context?: SourceContext;
  out?: (line: string) => void;
}): Promise<{ lines: string[]; failures: string[] }> {
  const lines: string[] = [];
  const failures: string[] = [];
  const say = (line: string) => lines.push(line);
  const progress = (step: string) => options.out?.(`  phishing match: ${step}…`);
  const random = seededRandom(13);
  const watched = [...new Set(Array.from({ length: options.watched }, (_, i) => watchedDomain(i, random)))];
  const planted = new Map<string, number>();
  const observed: DomainName[] = [];
  for (let i = 0; observed.length < options.observed; i++) {
    let raw = syntheticDomain(i);
    if (random() < PLANTED_SHARE) {
      const target = Math.floor(random() * watched.length);
      raw = plantLookalike(watched[target]!, random);
      // A swap of two equal letters is the domain itself.
      if (planted.has(raw) || raw === watched[target]) continue;
      planted.set(raw, target);
    }
    const name = parseDomainName(raw);
    if (typeof name === 'string') throw new Error(`bench: ${raw}: ${name}`);
    observed.push(name);
  }
  const plantedAscii = new Map(
    [...planted].map(([raw, target]) => [(parseDomainName(raw) as DomainName).domain, target]),
  );

  lines.push(
    `phishing candidate generation + match time for ${count(watched.length)} watched domains against ${count(observed.length)} new domains (target < ${TARGET_MS / 1000} s, ≥ ${TARGET_SPEEDUP}× one-domain-at-a-time)`,
  );

  progress(
    `generating ${count(watched.length)} watched domains' candidates and scanning ${count(observed.length)} names in memory`,
  );
  // Warm-up, so neither side is timed while the JIT compiles.
  const warm = createLookalikeIndex(watched.slice(0, 50));
  for (const name of observed.slice(0, 20_000)) warm.lookalikesOf(name);

  // In memory: the index the tick builds, then one pass over the observed names.
  let started = performance.now();
  const index = createLookalikeIndex(watched);
  const generation = performance.now() - started;
  started = performance.now();
  let hits = 0;
  let found = 0;
  for (const name of observed) {
    const lookalikes = index.lookalikesOf(name);
    hits += lookalikes.length;
    const target = plantedAscii.get(name.domain);
    if (target !== undefined && lookalikes.some((lookalike) => lookalike.watched === target)) found++;
  }
  const scan = performance.now() - started;
  const heapMb = Math.round(process.memoryUsage().heapUsed / 1e6);
  const batchMs = generation + scan;
  say(
    `  in memory: generation ${seconds(generation)} (${count(index.candidates)} candidates, heap ${count(heapMb)} MB), scan ${seconds(scan)}, total ${seconds(batchMs)}; ${count(hits)} hits, planted lookalikes found ${count(found)}/${count(plantedAscii.size)}`,
  );
  if (found < plantedAscii.size) failures.push(`phishing: ${plantedAscii.size - found} planted lookalikes not found`);

  progress('one watched domain at a time, on a sample');
  // One at a time, on a sample: each watched domain's own index and a pass over everything.
  let sampled = 0;
  started = performance.now();
  while (
    sampled < Math.min(SAMPLE_DOMAINS, watched.length) &&
    (sampled < 5 || performance.now() - started < SAMPLE_MS)
  ) {
    const single = createLookalikeIndex([
      watched[Math.floor((sampled * watched.length) / SAMPLE_DOMAINS) % watched.length]!,
    ]);
    for (const name of observed) single.lookalikesOf(name);
    sampled++;
  }
  const perDomain = (performance.now() - started) / sampled;
  const oneAtATime = perDomain * watched.length;
  const speedup = oneAtATime / batchMs;
  say(
    `  one domain at a time: ${seconds(perDomain)} a domain (${sampled} sampled, in memory) → ${seconds(oneAtATime)} for ${count(watched.length)}; batch speedup ${Math.round(speedup)}×`,
  );
  if (speedup < TARGET_SPEEDUP) failures.push(`phishing: batch speedup ${speedup.toFixed(1)}× < ${TARGET_SPEEDUP}×`);

  let tickMs = batchMs;
  if (options.context) {
    // Through the store: the domains stored as an ingest would, then the tick's matchMany code.
    const context = options.context;
    progress(`writing the observed domains to the ${context.engine} store, then matchMany`);
    const until = context.clock.now().getTime();
    started = performance.now();
    for (let i = 0; i < observed.length; i += WRITE_BATCH) {
      const batch = observed
        .slice(i, i + WRITE_BATCH)
        .map((name) => ({ name, domain: { domain: name.domain, origin: 'nrd' as const } }));
      await writeObservedDomains(context, batch, until - DAY_MS + Math.floor((i / observed.length) * DAY_MS));
    }
    const write = performance.now() - started;
    started = performance.now();
    const phishing = findSource(8)!;
    const rules = watched.map((domain, ruleId) => ({ ruleId, args: { domain }, since: until - 2 * DAY_MS }));
    const results = await phishing.matchMany!(context, rules, until, 10_000);
    tickMs = performance.now() - started;
    const total = [...results.values()].reduce((sum, result) => sum + result.total, 0);
    say(
      `  through the store (${context.engine}): ${count(observed.length)} observed domains written in ${seconds(write)} (not in the target); matchMany ${seconds(tickMs)} (generation + paged scan + hits), ${count(total)} hits`,
    );
    if (total !== hits) failures.push(`phishing: the store path found ${total} hits, in memory ${hits}`);
  }
  if (tickMs > TARGET_MS) failures.push(`phishing: generation + match took ${seconds(tickMs)} > ${TARGET_MS / 1000} s`);
  const measured = options.context ? `for the tick's matchMany on ${options.context.engine}` : 'in memory';
  say(
    `  ${tickMs <= TARGET_MS && speedup >= TARGET_SPEEDUP ? 'PASS' : 'FAIL'}: ${seconds(tickMs)} ${measured}, ${Math.round(speedup)}× faster than one domain at a time`,
  );
  return { lines, failures };
}
