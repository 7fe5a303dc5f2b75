import type { Generated, Kysely } from 'kysely';
import { createReadCache } from '../../db/read-cache.ts';
import type { Database } from '../../db/schema.ts';

interface ApiKeyTable {
  id: Generated<number>;
  org_id: number;
  created_by: number;
  name: string;
  scope: string;
  prefix: string;
  key_digest: string;
  created_at: number;
  expires_at: number | null;
  last_used_at: number | null;
  last_used_ip: string | null;
  used_logged_at: number | null;
  revoked_at: number | null;
  revoked_by: number | null;
}

// A type alias, not an interface: withTables needs an index-signature-compatible type.
type ApiKeyTables = { api_keys: ApiKeyTable };

export interface ApiKeyRow {
  id: number;
  org_id: number;
  created_by: number;
  name: string;
  scope: string;
  prefix: string;
  created_at: number;
  expires_at: number | null;
  last_used_at: number | null;
  last_used_ip: string | null;
  revoked_at: number | null;
}

/** A key as the list shows it: with its creator's and revoker's emails. */
export interface ListedApiKey extends ApiKeyRow {
  created_by_email: string | null;
  revoked_by_email: string | null;
}

const KEY_COLUMNS = [
  'api_keys.id',
  'api_keys.org_id',
  'api_keys.created_by',
  'api_keys.name',
  'api_keys.scope',
  'api_keys.prefix',
  'api_keys.created_at',
  'api_keys.expires_at',
  'api_keys.last_used_at',
  'api_keys.last_used_ip',
  'api_keys.revoked_at',
] as const;

/** Ids and times come back as strings from PostgreSQL's bigint: converted once here. */
const toRow = <R extends ApiKeyRow>(row: R): R => ({
  ...row,
  id: Number(row.id),
  org_id: Number(row.org_id),
  created_by: Number(row.created_by),
  created_at: Number(row.created_at),
  expires_at: row.expires_at === null ? null : Number(row.expires_at),
  last_used_at: row.last_used_at === null ? null : Number(row.last_used_at),
  revoked_at: row.revoked_at === null ? null : Number(row.revoked_at),
});

/** `changeStamp`: see Store.changeStamp; a key is looked up by digest on every request it makes. */
export function createApiKeyRepository(deps: { db: Kysely<Database>; changeStamp: () => string | null }) {
  const db = deps.db.withTables<ApiKeyTables>();
  const byDigest = createReadCache<string, ApiKeyRow | undefined>(deps.changeStamp);
  const listed = () =>
    db
      .selectFrom('api_keys')
      .leftJoin('users as creator', 'creator.id', 'api_keys.created_by')
      .leftJoin('users as revoker', 'revoker.id', 'api_keys.revoked_by')
      .select([...KEY_COLUMNS, 'creator.email as created_by_email', 'revoker.email as revoked_by_email']);

  return {
    findByDigest: (digest: string) =>
      byDigest.get(digest, async () => {
        const row = await db
          .selectFrom('api_keys')
          .select(KEY_COLUMNS)
          .where('key_digest', '=', digest)
          .executeTakeFirst();
        return row && toRow(row);
      }),

    async insert(
      values: Omit<
        ApiKeyTable,
        'id' | 'last_used_at' | 'last_used_ip' | 'used_logged_at' | 'revoked_at' | 'revoked_by'
      >,
    ): Promise<number> {
      const row = await db.insertInto('api_keys').values(values).returning('id').executeTakeFirstOrThrow();
      return Number(row.id);
    },

    async get(orgId: number, id: number): Promise<ListedApiKey | undefined> {
      const row = await listed().where('api_keys.org_id', '=', orgId).where('api_keys.id', '=', id).executeTakeFirst();
      return row && toRow(row);
    },

    async list(orgId: number, page: { offset: number; limit: number }) {
      const [{ total }, rows] = await Promise.all([
        db
          .selectFrom('api_keys')
          .where('org_id', '=', orgId)
          .select((eb) => eb.fn.countAll<number>().as('total'))
          .executeTakeFirstOrThrow(),
        listed()
          .where('api_keys.org_id', '=', orgId)
          .orderBy('api_keys.id', 'desc')
          .offset(page.offset)
          .limit(page.limit)
          .execute(),
      ]);
      return { results: rows.map(toRow), total: Number(total) };
    },

    /** Revokes an unrevoked key of `orgId`; false when there is none (already revoked, or not found). */
    async revoke(orgId: number, id: number, by: number, at: number): Promise<boolean> {
      const result = await db
        .updateTable('api_keys')
        .set({ revoked_at: at, revoked_by: by })
        .where('org_id', '=', orgId)
        .where('id', '=', id)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    /**
     * Records a use. Returns whether this use is one for the audit log: the first in an hour, or
     * from another address than the last recorded; decided in the one statement that marks it, so
     * that two processes never both log the same use.
     */
    async markUsed(id: number, at: number, ip: string, auditEveryMs: number): Promise<'logged' | 'marked'> {
      const logged = await db
        .updateTable('api_keys')
        .set({ last_used_at: at, last_used_ip: ip, used_logged_at: at })
        .where('id', '=', id)
        .where((eb) =>
          eb.or([
            eb('used_logged_at', 'is', null),
            eb('used_logged_at', '<=', at - auditEveryMs),
            eb('last_used_ip', 'is', null),
            eb('last_used_ip', '!=', ip),
          ]),
        )
        .executeTakeFirst();
      if (Number(logged.numUpdatedRows) > 0) return 'logged';
      await db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute();
      return 'marked';
    },
  };
}

export type ApiKeyRepository = ReturnType<typeof createApiKeyRepository>;
