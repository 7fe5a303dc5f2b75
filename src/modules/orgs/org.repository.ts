import type { Kysely, Selectable, Transaction } from 'kysely';
import { createReadCache } from '../../db/read-cache.ts';
import type { Database, OrganizationTable } from '../../db/schema.ts';

export type OrganizationRow = Selectable<OrganizationTable>;
type Executor = Kysely<Database> | Transaction<Database>;

export interface OrganizationChanges {
  name?: string;
  alert_rule_limit?: number;
  default_frequency?: string;
  dashboard_url?: string | null;
  managed_by_org_id?: number | null;
}

export interface NewOrganization {
  name: string;
  alert_rule_limit: number;
  default_frequency: string;
  dashboard_url: string | null;
  managed_by_org_id: number | null;
  now: number;
}

const rowOf = ({ now, ...values }: NewOrganization) => ({ ...values, created_at: now, updated_at: now });

/** `changeStamp`: see Store.changeStamp; reads by id outside a transaction reuse rows while it holds. */
export function createOrganizationRepository(db: Kysely<Database>, changeStamp: () => string | null) {
  const byId = createReadCache<number, OrganizationRow | undefined>(changeStamp);
  const readById = (id: number, tx: Executor) =>
    tx.selectFrom('organizations').selectAll().where('id', '=', id).executeTakeFirst();
  return {
    findById: (id: number, tx?: Executor) => (tx ? readById(id, tx) : byId.get(id, () => readById(id, db))),

    findByName: (name: string, tx: Executor = db) =>
      tx.selectFrom('organizations').selectAll().where('name', '=', name).executeTakeFirst(),

    list: (tx: Executor = db) => tx.selectFrom('organizations').selectAll().orderBy('id').execute(),

    listManagedBy: (managerOrgId: number, tx: Executor = db) =>
      tx.selectFrom('organizations').selectAll().where('managed_by_org_id', '=', managerOrgId).orderBy('id').execute(),

    insert: (values: NewOrganization, tx: Executor = db) =>
      tx.insertInto('organizations').values(rowOf(values)).returningAll().executeTakeFirstOrThrow(),

    /** Inserts unless an organization of that name exists (unique name: of several at once, one inserts). */
    insertIfMissing: (values: NewOrganization, tx: Executor = db) =>
      tx
        .insertInto('organizations')
        .values(rowOf(values))
        .onConflict((oc) => oc.column('name').doNothing())
        .execute(),

    update: (id: number, changes: OrganizationChanges, now: number, tx: Executor = db) =>
      tx
        .updateTable('organizations')
        .set({ ...changes, updated_at: now })
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirstOrThrow(),
  };
}

export type OrganizationRepository = ReturnType<typeof createOrganizationRepository>;
