import path from 'node:path';
import { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import { sql, type SqlBool } from 'kysely';
import {
  expandInputs,
  IngestError,
  inputLine,
  newInputResult,
  openInput,
  reject,
  reportInputs,
  type InputResult,
} from '../common/ingest/ingest-kit.ts';
import { comboLine, generateCredentials } from '../common/leaks/demo-credentials.ts';
import { oneOf } from '../kit/arg-params.ts';
import {
  defineSource,
  type Hit,
  type Ingester,
  type MatchResult,
  type MatchWindow,
  type SourceContext,
} from '../kit/source.ts';
import * as m0001 from './migrations/0001_raw_leak_files.ts';
import { presentLine, scanStream, termPattern, type TermType } from './raw-leak-scan.ts';
import { FILE_TYPES, openStored, rawLeakDb, storeRawFile } from './raw-leak-store.ts';
import { newestRecord } from '../kit/newest-record.ts';
import { rawLeakStix } from './raw-leak-stix.ts';

/**
 * Raw leak extended search (id 4): a full scan of the raw files of every ingested leak (dumps,
 * SQL exports, logs: any text lines) for a term. It is the expensive source, hence async: a run
 * starts a background job that scans the files and fills the match when done (spec 3.3.5),
 * reporting bytes scanned as the match's progress. A run reads the files ingested in its
 * window (last_run, now]: a file is scanned for a rule once.
 *
 * Hit data: leak_name, file_type, line_number, line (the matching line; in a short
 * login:password record, the password masked), matched_term, term_type, indexed_at.
 */
interface RawLeakSearch {
  term: string;
  termType: TermType;
  fileTypes?: string[];
  caseSensitive: boolean;
}

const MIN_TERM = 3;

async function match(
  context: SourceContext,
  search: RawLeakSearch,
  window: MatchWindow,
  limit: number,
): Promise<MatchResult> {
  const { term, termType } = search;
  const conditions = [sql<SqlBool>`indexed_at <= ${window.until}`];
  if (window.since !== null) conditions.push(sql<SqlBool>`indexed_at > ${window.since}`);
  if (search.fileTypes?.length) conditions.push(sql<SqlBool>`file_type in (${sql.join(search.fileTypes)})`);
  const { rows: files } = await sql<{
    sha256: string;
    name: string;
    file_type: string;
    size: number;
    line_index: string;
    indexed_at: number;
  }>`
    select sha256, name, file_type, size, line_index, indexed_at from raw_leak_files where ${sql.join(conditions, sql` and `)}
    order by indexed_at desc, id desc`.execute(rawLeakDb(context));
  const totalBytes = files.reduce((n, file) => n + Number(file.size), 0);
  let scanned = 0;
  let total = 0;
  const hits: Hit[] = [];
  await context.reportProgress?.(0, totalBytes, 'bytes');
  const pattern = termPattern(term, termType, search.caseSensitive);
  for (const file of files) {
    const progress: Promise<void>[] = [];
    await scanStream(
      openStored(context, file.sha256),
      JSON.parse(file.line_index) as number[],
      pattern,
      (found) => {
        total++;
        if (hits.length >= limit) return;
        hits.push({
          key: `${file.sha256}:${found.line}`,
          date: Number(file.indexed_at),
          data: {
            leak_name: file.name,
            file_type: file.file_type,
            line_number: found.line,
            line: presentLine(found.text, term),
            matched_term: term,
            term_type: termType,
            indexed_at: new Date(Number(file.indexed_at)).toISOString(),
          },
        });
      },
      (bytes) => {
        scanned += bytes;
        if (context.reportProgress) progress.push(context.reportProgress(scanned, totalBytes, 'bytes'));
      },
    );
    await Promise.all(progress);
  }
  await context.reportProgress?.(totalBytes, totalBytes, 'bytes');
  return { hits, total };
}

const rawLeakIngester: Ingester = {
  name: 'raw_leak_extended',
  description:
    'raw leak files of any text format (dumps, SQL exports, CSV, logs), kept whole for the full scan; files, folders or - (stdin)',
  formats: ['auto'],
  async run(context, inputs, options) {
    const results: InputResult[] = [];
    let files: string[];
    try {
      files = expandInputs(inputs, () => true);
    } catch (error) {
      if (!(error instanceof IngestError)) throw error;
      const failed = { ...newInputResult(error.source), ok: false, error: error.message };
      return reportInputs('lines', [failed]);
    }
    for (const file of files) {
      const result = newInputResult(file);
      results.push(result);
      const { stream, size } = openInput(file);
      if (size !== null) options.progress?.start(file, size, 'bytes');
      const name = file === '-' ? 'stdin' : path.basename(file);
      const stored = await storeRawFile(context, stream, name, (bytes) => options.progress?.advance(bytes));
      result.records = stored.lines;
      if (stored.binary) reject(result, file, 'binary file (NUL bytes): not a text leak');
      else if (stored.added) result.added = stored.lines;
      else result.duplicates = stored.lines;
      options.progress?.finish(inputLine('lines', result));
    }
    return reportInputs('lines', results, { files_added: results.filter((r) => r.added > 0).length });
  },
};

export const rawLeakExtendedSource = defineSource({
  stix: rawLeakStix,
  id: 4,
  name: 'raw_leak_extended',
  alias: 'Raw leak extended search',
  description:
    'Full-text scan of raw leak files (dumps, SQL exports, logs) for a domain, email, IP, phone, username or keyword.',
  serviceType: 'async',
  frequency: 'weekly',
  args: Type.Object({
    query: Type.String({
      description: 'Term searched in every line of the raw leak files (at least 3 characters)',
      examples: ['acme-bank.com'],
    }),
    term_type: Type.Optional(
      oneOf(['domain', 'email', 'ip', 'phone', 'username', 'keyword'] satisfies TermType[], {
        description:
          'How the term is matched: keyword = any substring (the default); the others must stand alone (domain: subdomains included)',
        examples: ['domain'],
      }),
    ),
    file_types: Type.Optional(
      Type.Array(oneOf(FILE_TYPES), {
        description: 'Only files of these kinds (by extension; other files are txt)',
        examples: [['txt', 'csv']],
      }),
    ),
    case_sensitive: Type.Optional(
      Type.Boolean({
        description: 'Match the term case-sensitively (off by default; case folding covers ASCII letters)',
        examples: [false],
      }),
    ),
  }),
  excludableFields: ['leak_name', 'line'],
  filterableFields: ['leak_name', 'file_type', 'term_type'],
  sortableFields: ['indexed_at', 'leak_name', 'line_number'],
  hasData: true,
  newestRecordAt: newestRecord('raw_leak_files', 'indexed_at'),
  prepare(args) {
    // A shorter term matches in nearly every line of a dump: a scan of everything, for noise.
    if (args.query.length < MIN_TERM)
      return { errors: [{ field: 'args.query', message: `must be at least ${MIN_TERM} characters`, rule: 3 }] };
    return {
      value: {
        term: args.query,
        termType: args.term_type ?? 'keyword',
        fileTypes: args.file_types,
        caseSensitive: Boolean(args.case_sensitive),
      },
    };
  },
  match,
  migrations: { 'raw_leak_extended/0001_raw_leak_files': m0001 },
  ingesters: [rawLeakIngester],
  async demo(context) {
    // A combolist dump and an SQL export that mention the catalog example's domain.
    const combo = [...generateCredentials({ seed: 4, count: 300 })].map(comboLine).join('\n');
    const sqlDump = [
      "INSERT INTO `users` VALUES (1,'j.doe@acme-bank.com','$2y$10$k7lW0m8p2q3r4s5t6u7v8uQ1w2e3r4t5y6u7i8o9p0a1s2d3f4g5h','2025-11-02');",
      "INSERT INTO `users` VALUES (2,'m.roe@globex.com','$2y$10$a1b2c3d4e5f6g7h8i9j0kuL1m2n3o4p5q6r7s8t9u0v1w2x3y4z5a6','2025-11-03');",
    ].join('\n');
    let added = 0;
    for (const [name, text] of [
      ['demo-combo-2026.txt', combo],
      ['demo-shop-users.sql', `${sqlDump}\n`],
    ] as const) {
      if ((await storeRawFile(context, Readable.from([Buffer.from(text)]), name)).added) added++;
    }
    return `Demo raw leak files: ${added} added (a raw_leak_extended rule on acme-bank.com scans them)`;
  },
});
