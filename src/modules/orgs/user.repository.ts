import type { Kysely, Selectable, Transaction, Updateable } from 'kysely';
import { createReadCache } from '../../db/read-cache.ts';
import type { Database, UserTable } from '../../db/schema.ts';

export type UserRow = Selectable<UserTable>;
type Executor = Kysely<Database> | Transaction<Database>;

/** `changeStamp`: see Store.changeStamp; reads by id outside a transaction reuse rows while it holds. */
export function createUserRepository(db: Kysely<Database>, changeStamp: () => string | null) {
  const byId = createReadCache<number, UserRow | undefined>(changeStamp);
  const readById = (id: number, tx: Executor) =>
    tx.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
  return {
    /** Every authenticated request reads its user: outside a transaction, from the read cache. */
    findById: (id: number, tx?: Executor) => (tx ? readById(id, tx) : byId.get(id, () => readById(id, db))),

    findByEmail: (email: string, tx: Executor = db) =>
      tx.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst(),

    list: (orgId: number | undefined, tx: Executor = db) => {
      let query = tx.selectFrom('users').selectAll().orderBy('id');
      if (orgId !== undefined) query = query.where('org_id', '=', orgId);
      return query.execute();
    },

    insert: (
      values: { org_id: number; email: string; password_hash: string; role: string; now: number },
      tx: Executor = db,
    ) =>
      tx
        .insertInto('users')
        .values({
          org_id: values.org_id,
          email: values.email,
          password_hash: values.password_hash,
          role: values.role,
          password_changed_at: values.now,
          created_at: values.now,
        })
        .returningAll()
        .executeTakeFirstOrThrow(),

    update: (id: number, changes: Updateable<UserTable>, tx: Executor = db) =>
      tx.updateTable('users').set(changes).where('id', '=', id).executeTakeFirst(),

    /** Turns 2FA off: seeds and backup codes go, so a new enrollment starts from nothing. */
    clearTwoFactor: (id: number) =>
      db.transaction().execute(async (tx) => {
        await tx
          .updateTable('users')
          .set({ totp_enabled: 0, totp_secret: null, totp_pending_secret: null, totp_last_step: null })
          .where('id', '=', id)
          .execute();
        await tx.deleteFrom('backup_codes').where('user_id', '=', id).execute();
      }),
  };
}

export type UserRepository = ReturnType<typeof createUserRepository>;
