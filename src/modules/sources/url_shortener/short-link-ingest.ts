import path from 'node:path';
import {
  expandInputs,
  IngestError,
  newInputResult,
  readByteLines,
  reportInputs,
  storeInBatches,
  type IngestProgress,
  type InputResult,
  type ReadRecord,
} from '../common/ingest/ingest-kit.ts';
import { validationError } from '../../../lib/errors.ts';
import { parseDomainName } from '../common/domains/domain-name.ts';
import { parseTimestamp } from '../common/ingest/timestamp.ts';
import { detectFormat, peekInput, type DetectableFormat } from '../common/ingest/format-detection.ts';
import type { Ingester, SourceContext } from '../kit/source.ts';
import { writeShortLinks, type ShortLink } from './short-link-store.ts';
import { losslessText, parseDumpLine } from './urlteam-dump.ts';

/** `dragnet ingest url_shortener`: URLTeam dumps, streamed line by line (docs/ingest.md). */

/** Which shortener a dump's links belong to, and how its short URLs start. */
interface Shortener {
  service: string;
  prefix: string;
}

const withoutWww = (host: string) => host.replace(/\.$/, '').replace(/^www\./, '');

/** The shortener a BEACON `#PREFIX:` names (`https://v.gd/` → v.gd), or null when it names none. */
export function shortenerOfPrefix(prefix: string): Shortener | null {
  const url = /^[a-z][a-z0-9+.-]*:\/\//i.test(prefix) ? prefix : `https://${prefix}`;
  const host = URL.canParse(url) ? new URL(url).hostname : '';
  return host ? { service: withoutWww(host), prefix: url } : null;
}

/** The shortener a file is named after (`v.gd.txt` → v.gd), for dumps without a `#PREFIX:` header. */
export function shortenerOfFileName(file: string): Shortener | null {
  const name = parseDomainName(path.basename(file).replace(/\.txt$/i, ''));
  return typeof name === 'string' ? null : { service: withoutWww(name.domain), prefix: `https://${name.domain}/` };
}

/**
 * The shortener a dump's name gives: its file's (`v.gd.txt`), else its folder's, as URLTeam's
 * exporter names files by shortcode prefix (`v.gd/0a.txt`).
 */
const shortenerOfPath = (input: string): Shortener | null =>
  input === '-'
    ? null
    : (shortenerOfFileName(input) ?? shortenerOfFileName(path.basename(path.dirname(path.resolve(input)))));

const NO_SHORTENER =
  'no shortener: the dump has no #PREFIX: header and neither its file nor its folder is named after a host; give it with --shortener v.gd (?shortener=v.gd for POST /ingest/url_shortener/), or add "#PREFIX: https://v.gd/" before the links';

// Links per transaction: a crash loses at most one uncommitted batch.
const BATCH = 1000;

type DumpResult = InputResult & { pseudo_targets: number };

/**
 * The links of a dump, read line by line. Meta lines set the shortener and crawl time of the
 * links after them; notfound/blocked targets are counted into `result`, not stored.
 */
async function* linksOf(
  lines: AsyncIterable<{ bytes: Buffer; number: number }>,
  input: string,
  result: DumpResult,
  given: Shortener | null,
): AsyncGenerator<ReadRecord<ShortLink>> {
  let shortener = given ?? shortenerOfPath(input);
  let crawledAt: number | null = null;
  for await (const { bytes, number } of lines) {
    const entry = parseDumpLine(losslessText(bytes));
    if (entry === null) continue;
    const location = `line ${number}`;
    if (entry.kind === 'bad') {
      yield { location, record: entry.reason };
    } else if (entry.kind === 'pseudo') {
      result.pseudo_targets++;
    } else if (entry.kind === 'meta') {
      // Meta lines count wherever they are: dumps concatenated with cat keep their own prefixes.
      // The shortener given by hand stands for every link of the input.
      if (entry.field === 'PREFIX' && !given) {
        shortener = shortenerOfPrefix(entry.value);
        if (!shortener) throw new IngestError(input, location, `#PREFIX: ${entry.value} is not a URL`);
      } else if (entry.field === 'TIMESTAMP') {
        crawledAt = parseTimestamp(entry.value);
        if (crawledAt === null) yield { location, record: `#TIMESTAMP: ${entry.value} is not a date` };
      }
    } else {
      if (!shortener) throw new IngestError(input, location, NO_SHORTENER);
      yield {
        location,
        record: {
          ...shortener,
          shortcode: entry.shortcode,
          targetUrl: entry.targetUrl,
          target: entry.target,
          crawledAt,
        },
      };
    }
  }
}

/** The one format, for the refusal of an input in none: its first line that is no comment is a `shortcode|long_url` link. */
const URLTEAM_FORMAT: DetectableFormat = {
  name: 'urlteam',
  writtenBy: 'URLTeam terroroftinytown releases: BEACON dumps and headerless shortcode|long_url exports',
  detect(head) {
    const first = head.split('\n').find((line) => line.trim() !== '' && !line.trimStart().startsWith('#'));
    return first === undefined || first.includes('|');
  },
};

async function ingestDump(
  context: SourceContext,
  input: string,
  shortener: Shortener | null,
  progress?: IngestProgress,
): Promise<DumpResult> {
  const result: DumpResult = { ...newInputResult(input), pseudo_targets: 0 };
  const { head, stream, size } = await peekInput(input);
  if (size !== null) progress?.start(input, size, 'bytes');
  const discoveredAt = context.clock.now().getTime();
  await storeInBatches({
    result,
    records: (async function* () {
      detectFormat('url_shortener', input, head, [URLTEAM_FORMAT]);
      yield* linksOf(
        readByteLines(stream, (bytes) => progress?.advance(bytes)),
        input,
        result,
        shortener,
      );
    })(),
    batchSize: BATCH,
    write: (batch) => writeShortLinks(context, batch, discoveredAt),
    stream,
    noun: 'links',
    progress,
  });
  return result;
}

export const urlShortenerIngester: Ingester = {
  name: 'url_shortener',
  description: 'URL-shortener dumps (URLTeam shortcode|long_url, BEACON headers), .txt files, folders or - (stdin)',
  formats: ['urlteam'],
  async run(context, inputs, options) {
    const given = options.shortener === undefined ? null : shortenerOfPrefix(options.shortener.trim());
    if (options.shortener !== undefined && !given)
      throw validationError('shortener', 'must be a shortener host or URL, such as v.gd or https://v.gd/');
    const results: DumpResult[] = [];
    for (const input of expandInputs(inputs, (file) => path.extname(file).toLowerCase() === '.txt')) {
      results.push(await ingestDump(context, input, given, options.progress));
    }
    const pseudoTargets = results.reduce((n, result) => n + result.pseudo_targets, 0);
    const report = reportInputs('links', results, { pseudo_targets_skipped: pseudoTargets });
    return {
      ...report,
      lines: [`${report.lines[0]}; ${pseudoTargets} notfound/blocked skipped`, ...report.lines.slice(1)],
    };
  },
};
