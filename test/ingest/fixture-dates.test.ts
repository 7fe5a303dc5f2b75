import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteDatabase } from '../../src/db/sqlite-native.ts';
import { repoRoot, runCli } from '../support/cli.ts';
import { createTestStoreLocation, testEngine, type TestStoreLocation } from '../support/test-store.ts';
import { scaled } from '../support/wait.ts';

const FIXTURES = path.join(repoRoot, 'test/fixtures');
const CLI_MS = scaled(120_000);
const DAY_MS = 86_400_000;
const EARLIEST_MS = Date.UTC(1990, 0, 1);

// Columns that hold the date of something that happened. Validity ends (not_after), card expiries
// and the scheduler's own times (due_at, run_after, next_run_at, expires_at) may lie ahead.
const EVENT_DATE = /(^|_)(at|date|seen|not_before)$/;
const MAY_LIE_AHEAD = new Set(['not_after', 'expires_at', 'due_at', 'run_after', 'next_run_at']);

interface DateColumn {
  table: string;
  column: string;
}

/** Epoch ms of a stored value: the stores keep ms; a value in seconds is read as seconds. */
const epochMs = (value: number) => (value < 1e11 ? value * 1000 : value);

/** The event dates inside documents' fields (forum posts, pastes keep theirs in JSON), as `documents.fields.<key>` ranges. */
function documentDateRanges(fieldsOfRows: unknown[]): { column: string; min: number; max: number }[] {
  const byKey = new Map<string, { min: number; max: number }>();
  for (const fields of fieldsOfRows) {
    const record = (typeof fields === 'string' ? JSON.parse(fields) : fields) as Record<string, unknown>;
    for (const [key, value] of Object.entries(record)) {
      if (!EVENT_DATE.test(key) || MAY_LIE_AHEAD.has(key) || value === null) continue;
      const ms = typeof value === 'number' ? epochMs(value) : typeof value === 'string' ? Date.parse(value) : NaN;
      if (Number.isNaN(ms)) continue;
      const range = byKey.get(key) ?? { min: ms, max: ms };
      byKey.set(key, { min: Math.min(range.min, ms), max: Math.max(range.max, ms) });
    }
  }
  return [...byKey].map(([key, range]) => ({ column: `documents.fields.${key}`, ...range }));
}

async function dateRanges(location: TestStoreLocation): Promise<{ column: string; min: number; max: number }[]> {
  const ranges: { column: string; min: number; max: number }[] = [];
  const keep = ({ table, column }: DateColumn, min: unknown, max: unknown) => {
    if (min !== null && max !== null)
      ranges.push({ column: `${table}.${column}`, min: epochMs(Number(min)), max: epochMs(Number(max)) });
  };
  const isEventDate = (column: string) => EVENT_DATE.test(column) && !MAY_LIE_AHEAD.has(column);
  if (location.databaseUrl) {
    const client = new pg.Client({ connectionString: location.databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query<DateColumn>(
        // A partitioned table's parent reads its partitions: the partitions themselves are left out.
        `select c.relname as table, a.attname as column
           from pg_attribute a join pg_class c on c.oid = a.attrelid join pg_namespace n on n.oid = c.relnamespace
          where n.nspname = 'public' and c.relkind in ('r', 'p') and not c.relispartition and a.attnum > 0
            and not a.attisdropped and format_type(a.atttypid, a.atttypmod) in ('bigint', 'integer')`,
      );
      for (const entry of rows.filter((row) => isEventDate(row.column))) {
        const { rows: found } = await client.query(
          `select min("${entry.column}") as min, max("${entry.column}") as max from "${entry.table}" where "${entry.column}" <> 0`,
        );
        keep(entry, found[0].min, found[0].max);
      }
      ranges.push(
        ...documentDateRanges(
          (await client.query<{ fields: unknown }>('select fields from documents')).rows.map((row) => row.fields),
        ),
      );
    } finally {
      await client.end();
    }
    return ranges;
  }
  const db = new SqliteDatabase(path.join(location.dataDir, 'dragnet.sqlite'), { readonly: true });
  try {
    const tables = db
      .prepare("select name from sqlite_master where type = 'table' and name not like 'sqlite_%'")
      .pluck()
      .all() as string[];
    for (const table of tables) {
      const columns = (db.prepare(`pragma table_info("${table}")`).all() as { name: string; type: string }[]).filter(
        (column) => /int/i.test(column.type) && isEventDate(column.name),
      );
      for (const { name: column } of columns) {
        const found = db
          .prepare(`select min("${column}") as min, max("${column}") as max from "${table}" where "${column}" <> 0`)
          .get() as { min: unknown; max: unknown };
        keep({ table, column }, found.min, found.max);
      }
    }
    ranges.push(...documentDateRanges(db.prepare('select fields from documents').pluck().all()));
  } finally {
    db.close();
  }
  return ranges;
}

describe(`every fixture ingested: no stored date in the future or before 1990 (${testEngine})`, () => {
  let location: TestStoreLocation;
  const targets = readdirSync(FIXTURES).filter((name) => statSync(path.join(FIXTURES, name)).isDirectory());

  beforeAll(async () => {
    location = await createTestStoreLocation();
    const migrated = await runCli(['migrate'], { env: location.env, timeoutMs: CLI_MS });
    expect(migrated.code, migrated.stderr).toBe(0);
  }, CLI_MS);

  afterAll(async () => {
    await location?.drop();
  });

  it(
    'ingests each source folder of test/fixtures and finds every event date between 1990 and now',
    async () => {
      expect(targets.length).toBeGreaterThan(5);
      for (const target of targets) {
        const result = await runCli(['--json', 'ingest', target, path.join(FIXTURES, target)], {
          env: location.env,
          timeoutMs: CLI_MS,
        });
        // A folder may hold a broken file on purpose (exit 1); the rest of it is stored.
        expect(result.code, `${target}: ${result.stderr}`).toBeLessThanOrEqual(1);
        expect(JSON.parse(result.stdout), target).toHaveProperty('failed');
      }
      const ranges = await dateRanges(location);
      const now = Date.now();
      expect(ranges.length).toBeGreaterThan(5);
      expect(
        ranges
          .filter((range) => range.max > now + DAY_MS)
          .map((range) => `${range.column}: ${new Date(range.max).toISOString()}`),
      ).toEqual([]);
      expect(
        ranges
          .filter((range) => range.min < EARLIEST_MS)
          .map((range) => `${range.column}: ${new Date(range.min).toISOString()}`),
      ).toEqual([]);
    },
    CLI_MS * 4,
  );
});
