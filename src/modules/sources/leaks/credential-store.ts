import { createHash } from 'node:crypto';
import { sql, type Generated, type Transaction } from 'kysely';
import type { Database } from '../../../db/schema.ts';
import type { SourceContext } from '../source.ts';
import { hashTypeOf, maskPassword, normalizeCredential, type CredentialRecord } from './credential.ts';
import * as m0001 from './migrations/0001_credentials.ts';

/** The tables of the credential store (migration leaks/0001_credentials). */
export interface LeakFileTable {
  id: Generated<number>;
  name: string;
  kind: string;
  records: Generated<number>;
  first_ingested_at: number;
  last_ingested_at: number;
}

export interface LeakCredentialTable {
  id: Generated<number>;
  leak_id: number;
  sighting_key: string;
  login: string;
  email: string | null;
  login_host: string | null;
  login_domain: string | null;
  url: string | null;
  host: string | null;
  domain: string | null;
  url_kind: string | null;
  password_sealed: string;
  password_hash: string;
  hash_type: string | null;
  software: string | null;
  country: string | null;
  os: string | null;
  leaked_at: number | null;
  discovered_at: number;
}

export interface DistinctCredentialTable {
  id: Generated<number>;
  distinct_key: string;
  login: string;
  email: string | null;
  login_domain: string | null;
  domain: string | null;
  url: string | null;
  password_sealed: string;
  password_hash: string;
  hash_type: string | null;
  password_sha1_prefix: string;
  first_seen: number;
  last_seen: number;
  sources: number;
}

// A type alias, not an interface: withTables needs an index-signature-compatible type.
export type LeakTables = {
  leak_files: LeakFileTable;
  leak_credentials: LeakCredentialTable;
  distinct_credentials: DistinctCredentialTable;
  distinct_credential_leaks: { distinct_key: string; leak_id: number };
};

/** Both leak sources declare the store's tables; the registry applies each migration once. */
export const credentialStoreMigrations = { 'leaks/0001_credentials': m0001 };

export type LeakKind = 'combolist' | 'stealer_log';

export const leakDb = (context: SourceContext) => context.db.withTables<LeakTables>();

// Rows per INSERT: 17 columns × 500 stays under SQLite's 32,766 bound variables.
const ROWS_PER_STATEMENT = 500;

export interface WriteCounts {
  added: number;
  duplicates: number;
}

/**
 * Writes credentials of one leak. Each `write` is one transaction, so a batch is stored whole
 * or not at all; a sighting already stored (same leak, login, URL and password) is skipped.
 */
export function createCredentialWriter(context: SourceContext) {
  const db = leakDb(context);
  const { keys, clock } = context;

  async function leakId(name: string, kind: LeakKind): Promise<number> {
    const now = clock.now().getTime();
    const row = await db
      .insertInto('leak_files')
      .values({ name, kind, first_ingested_at: now, last_ingested_at: now })
      .onConflict((oc) => oc.columns(['kind', 'name']).doUpdateSet({ last_ingested_at: now }))
      .returning('id')
      .executeTakeFirstOrThrow();
    return Number(row.id);
  }

  async function writeChunk(tx: Transaction<Database & LeakTables>, leak: number, records: CredentialRecord[], now: number): Promise<number> {
    const rows = records.map((record) => {
      const normalized = normalizeCredential(record);
      const passwordHash = keys.digest(`password:${record.password}`);
      return {
        leak_id: leak,
        sighting_key: keys.digest(`sighting:${leak}\n${normalized.login}\n${normalized.url ?? ''}\n${record.password}`),
        login: normalized.login,
        email: normalized.email,
        login_host: normalized.loginHost,
        login_domain: normalized.loginDomain,
        url: normalized.url,
        host: normalized.host,
        domain: normalized.domain,
        url_kind: normalized.urlKind,
        password_sealed: keys.encryptSecret(record.password),
        password_hash: passwordHash,
        hash_type: hashTypeOf(record.password),
        software: record.software ?? null,
        country: record.machine?.country ?? null,
        os: record.machine?.os ?? null,
        leaked_at: record.machine?.infectedAt ?? null,
        discovered_at: now,
      };
    });
    const inserted = new Set(
      (await tx.insertInto('leak_credentials').values(rows).onConflict((oc) => oc.column('sighting_key').doNothing()).returning('sighting_key').execute()).map(
        (row) => row.sighting_key,
      ),
    );
    if (inserted.size === 0) return 0;

    // The distinct view: one row per (login, site domain, password); a leak counts once.
    const distinct = new Map<string, { row: (typeof rows)[number]; sha1Prefix: string }>();
    rows.forEach((row, i) => {
      if (!inserted.has(row.sighting_key)) return;
      const sha1Prefix = createHash('sha1').update(records[i]!.password).digest('hex').slice(0, 5);
      distinct.set(keys.digest(`distinct:${row.login.toLowerCase()}\n${row.domain ?? row.login_domain ?? ''}\n${row.password_hash}`), { row, sha1Prefix });
    });
    const newForLeak = new Set(
      (
        await tx
          .insertInto('distinct_credential_leaks')
          .values([...distinct.keys()].map((key) => ({ distinct_key: key, leak_id: leak })))
          .onConflict((oc) => oc.columns(['distinct_key', 'leak_id']).doNothing())
          .returning('distinct_key')
          .execute()
      ).map((row) => row.distinct_key),
    );
    await tx
      .insertInto('distinct_credentials')
      .values(
        [...distinct].map(([key, { row, sha1Prefix }]) => ({
          distinct_key: key,
          login: row.login.toLowerCase(),
          email: row.email,
          login_domain: row.login_domain,
          domain: row.domain ?? row.login_domain,
          url: row.url,
          password_sealed: row.password_sealed,
          password_hash: row.password_hash,
          hash_type: row.hash_type,
          password_sha1_prefix: sha1Prefix,
          first_seen: now,
          last_seen: now,
          sources: newForLeak.has(key) ? 1 : 0,
        })),
      )
      .onConflict((oc) =>
        oc.column('distinct_key').doUpdateSet({
          last_seen: (eb) => eb.ref('excluded.last_seen'),
          sources: sql<number>`distinct_credentials.sources + excluded.sources`,
        }),
      )
      .execute();
    return inserted.size;
  }

  return {
    leakId,

    async write(leak: number, records: CredentialRecord[]): Promise<WriteCounts> {
      if (records.length === 0) return { added: 0, duplicates: 0 };
      const now = clock.now().getTime();
      const added = await db.transaction().execute(async (tx) => {
        let count = 0;
        for (let i = 0; i < records.length; i += ROWS_PER_STATEMENT) count += await writeChunk(tx, leak, records.slice(i, i + ROWS_PER_STATEMENT), now);
        if (count > 0) await tx.updateTable('leak_files').set((eb) => ({ records: eb('records', '+', count) })).where('id', '=', leak).execute();
        return count;
      });
      return { added, duplicates: records.length - added };
    },
  };
}

export type CredentialWriter = ReturnType<typeof createCredentialWriter>;

/** A sealed password as hits carry it: masked for notifications, sealed for its owner. */
export function passwordFields(context: SourceContext, sealed: string) {
  return { password: maskPassword(context.keys.decryptSecret(sealed)), password_sealed: sealed };
}

/** The hits endpoint shows the rule's own organization the password itself. */
export function openPassword(data: Record<string, unknown>, context: SourceContext): Record<string, unknown> {
  const { password_sealed: sealed, ...rest } = data;
  if (typeof sealed !== 'string') return rest;
  return { ...rest, password: context.keys.decryptSecret(sealed), password_masked: rest.password };
}
