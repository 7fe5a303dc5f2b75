import { createHash } from 'node:crypto';
import type { Generated } from 'kysely';
import { bulkTransaction, slices, writeRowsIn } from '../../../../db/bulk-insert.ts';
import type { SourceContext } from '../../kit/source.ts';
import { hashTypeOf, maskPassword, normalizeCredential, type CredentialRecord } from './credential.ts';
import * as m0001 from './migrations/0001_credentials.ts';
import * as m0002 from './migrations/0002_machine_and_app.ts';

/** The tables of the credential store (migrations leaks/0001_credentials, leaks/0002_machine_and_app). */
export interface LeakFileTable {
  id: Generated<number>;
  sha256: string;
  name: string;
  kind: string;
  lines_done: Generated<number>;
  records: Generated<number>;
  complete: Generated<number>;
  ingested_at: number;
}

export interface LeakCredentialTable {
  id: Generated<number>;
  leak_id: number;
  login: string;
  login_key: string;
  email: string | null;
  login_host: string | null;
  login_domain: string | null;
  url: string | null;
  host: string | null;
  domain: string | null;
  url_kind: string | null;
  password_sealed: string;
  password_hash: string;
  password_sha1_prefix: string;
  hash_type: string | null;
  software: string | null;
  country: string | null;
  os: string | null;
  machine: string | null;
  hwid: string | null;
  app_id: string | null;
  leaked_at: number | null;
  discovered_at: number;
}

// A type alias, not an interface: withTables needs an index-signature-compatible type.
export type LeakTables = {
  leak_files: LeakFileTable;
  leak_credentials: LeakCredentialTable;
};

/** Both leak sources declare the store's tables; the registry applies each migration once. */
export const credentialStoreMigrations = { 'leaks/0001_credentials': m0001, 'leaks/0002_machine_and_app': m0002 };

export type LeakKind = 'combolist' | 'stealer_log';

export const leakDb = (context: SourceContext) => context.db.withTables<LeakTables>();

// Rows per INSERT: 22 columns × 500 stays under SQLite's 32,766 bound variables.
const ROWS_PER_STATEMENT = 500;

/** An ingested file's place in the store: where a new ingest of it resumes. */
export interface LeakFile {
  id: number;
  linesDone: number;
  records: number;
  complete: boolean;
}

/**
 * Writes the credentials of ingested files. Each `write` is one transaction that also moves
 * the file's `lines_done`, so a batch is stored whole or not at all and an interrupted ingest
 * resumes exactly after its last stored batch.
 */
export function createCredentialWriter(context: SourceContext) {
  const db = leakDb(context);
  const { keys, clock } = context;

  const derive = (password: string) => ({
    password_sealed: keys.encryptSecret(password),
    password_hash: keys.digest(`password:${password}`),
    password_sha1_prefix: createHash('sha1').update(password).digest('hex').slice(0, 5),
    hash_type: hashTypeOf(password),
  });

  /** The derived password columns, once per distinct password of a batch (lists repeat them). */
  function passwordColumns(batch: Map<string, ReturnType<typeof derive>>, password: string) {
    let columns = batch.get(password);
    if (!columns) batch.set(password, (columns = derive(password)));
    return columns;
  }

  return {
    /** The file with this content, registered on first sight. */
    async open(sha256: string, name: string, kind: LeakKind): Promise<LeakFile> {
      await db
        .insertInto('leak_files')
        .values({ sha256, name, kind, ingested_at: clock.now().getTime() })
        .onConflict((oc) => oc.column('sha256').doNothing())
        .execute();
      const row = await db
        .selectFrom('leak_files')
        .select(['id', 'lines_done', 'records', 'complete'])
        .where('sha256', '=', sha256)
        .executeTakeFirstOrThrow();
      return {
        id: Number(row.id),
        linesDone: Number(row.lines_done),
        records: Number(row.records),
        complete: Number(row.complete) === 1,
      };
    },

    async write(file: LeakFile, records: CredentialRecord[], linesDone: number): Promise<number> {
      const now = clock.now().getTime();
      const passwords = new Map<string, ReturnType<typeof derive>>();
      const rows = records.map((record) => {
        const normalized = normalizeCredential(record);
        return {
          leak_id: file.id,
          login: normalized.login,
          login_key: normalized.login.toLowerCase(),
          email: normalized.email,
          login_host: normalized.loginHost,
          login_domain: normalized.loginDomain,
          url: normalized.url,
          host: normalized.host,
          domain: normalized.domain,
          url_kind: normalized.urlKind,
          ...passwordColumns(passwords, record.password),
          software: record.software ?? null,
          country: record.machine?.country ?? null,
          os: record.machine?.os ?? null,
          machine: record.machine?.folder ?? null,
          hwid: record.machine?.hwid ?? null,
          app_id: normalized.appId,
          leaked_at: record.machine?.infectedAt ?? null,
          discovered_at: now,
        };
      });
      await bulkTransaction(db, context.engine, async (tx, copy) => {
        await writeRowsIn(tx, copy, {
          table: 'leak_credentials',
          rows,
          conflict: 'none',
          statements: slices(ROWS_PER_STATEMENT),
        });
        await tx
          .updateTable('leak_files')
          .set((eb) => ({ lines_done: linesDone, records: eb('records', '+', rows.length) }))
          .where('id', '=', file.id)
          .execute();
      });
      file.linesDone = linesDone;
      file.records += rows.length;
      return rows.length;
    },

    async finish(file: LeakFile): Promise<void> {
      await db.updateTable('leak_files').set({ complete: 1 }).where('id', '=', file.id).execute();
      file.complete = true;
    },
  };
}

export type CredentialWriter = ReturnType<typeof createCredentialWriter>;

/** A sealed password as hits carry it: masked for notifications, sealed for its owner. */
export function passwordFields(context: SourceContext, sealed: string) {
  return { password: maskPassword(context.keys.decryptSecret(sealed)), password_sealed: sealed };
}

/** The hits endpoint shows the mask only: the password itself is revealed one hit at a time. */
export function hideSealedPassword(data: Record<string, unknown>): Record<string, unknown> {
  const { password_sealed: _sealed, ...rest } = data;
  return rest;
}

/** A hit's leaked password in clear, for the reveal endpoint (audited there). */
export function revealSealedPassword(data: Record<string, unknown>, context: SourceContext) {
  const sealed = data.password_sealed;
  return typeof sealed === 'string' ? { password: context.keys.decryptSecret(sealed) } : null;
}
