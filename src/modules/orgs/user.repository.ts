import type { Kysely, Selectable, Transaction, Updateable } from 'kysely';
import type { Database, UserTable } from '../../db/schema.ts';

export type UserRow = Selectable<UserTable>;
type Executor = Kysely<Database> | Transaction<Database>;

export function createUserRepository(db: Kysely<Database>) {
  return {
    findById: (id: number, tx: Executor = db) =>
      tx.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst(),

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
  };
}

export type UserRepository = ReturnType<typeof createUserRepository>;
