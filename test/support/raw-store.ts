import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import type { TestStoreLocation } from './test-store.ts';

export interface RawChunk {
  /** Where the bytes came from: a file name, or a table name on PostgreSQL. */
  source: string;
  bytes: Buffer;
}

/**
 * Everything the store holds, as raw bytes, bypassing the application: on SQLite every file of
 * the data folder (the database, its -wal and -shm); on PostgreSQL every row of every table in
 * schema public, as JSON text. For checking that secrets are not stored in the clear.
 */
export async function readRawStore(location: TestStoreLocation): Promise<RawChunk[]> {
  if (location.databaseUrl) {
    const client = new pg.Client({ connectionString: location.databaseUrl });
    await client.connect();
    try {
      const tables = await client.query<{ table_name: string }>(
        "select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE' order by table_name",
      );
      const chunks: RawChunk[] = [];
      for (const { table_name } of tables.rows) {
        const rows = await client.query<{ row: string }>(`select row_to_json(t)::text as row from "${table_name}" t`);
        chunks.push({ source: table_name, bytes: Buffer.from(rows.rows.map((r) => r.row).join('\n'), 'utf8') });
      }
      return chunks;
    } finally {
      await client.end();
    }
  }
  if (!existsSync(location.dataDir)) return [];
  return readdirSync(location.dataDir)
    .map((name) => path.join(location.dataDir, name))
    .filter((file) => statSync(file).isFile())
    .map((file) => ({ source: path.basename(file), bytes: readFileSync(file) }));
}

/** The sources whose bytes contain `needle`. */
export function sourcesContaining(chunks: RawChunk[], needle: string | Buffer): string[] {
  return chunks.filter((chunk) => chunk.bytes.includes(needle)).map((chunk) => chunk.source);
}
