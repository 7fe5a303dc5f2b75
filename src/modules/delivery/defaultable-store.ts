import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../db/schema.ts';
import type { Engine } from '../../db/store.ts';
import type { Clock } from '../../lib/clock.ts';
import { conflict, isUniqueViolation, notFound, validationError } from '../../lib/errors.ts';

export type DefaultableTable = 'recipients' | 'senders' | 'email_templates' | 'webhooks';

interface BaseRow {
  id: number;
  org_id: number | null;
  is_default: number;
  created_at: number;
}

export interface DefaultableStoreOptions {
  table: DefaultableTable;
  /** The resource's name in messages ("recipient"). */
  label: string;
  /** spec 8.2: at most this many per organization (shared rows not counted). */
  maxPerOrg?: number;
  /** Rows with org_id null (the system sender) are visible to every organization. */
  sharedRows?: boolean;
}

// Kysely cannot type a table chosen at run time; the row type is the caller's promise.
type AnyTables = Record<string, BaseRow & Record<string, unknown>>;
type AnyTransaction = Transaction<AnyTables>;

const visibleTo = (orgId: number, sharedRows: boolean | undefined) =>
  sql<boolean>`(org_id = ${orgId}${sharedRows ? sql` or org_id is null` : sql``})`;

/** A new row's created_at, and its updated_at when it has one: the same instant (#15). */
function createdAt(clock: Clock, values: Record<string, unknown>): Record<string, number> {
  const now = clock.now().getTime();
  return 'updated_at' in values ? { created_at: now, updated_at: now } : { created_at: now };
}

async function inOrgTransaction<T>(
  deps: { db: Kysely<AnyTables>; engine: Engine; label: string },
  orgId: number,
  work: (tx: AnyTransaction) => Promise<T>,
): Promise<T> {
  try {
    return await deps.db.transaction().execute(async (tx) => {
      if (deps.engine === 'postgres')
        await sql`select id from organizations where id = ${orgId} for update`.execute(tx);
      return work(tx);
    });
  } catch (error) {
    // Defaults cannot collide (the organization is locked), so this is a duplicate value.
    if (isUniqueViolation(error)) throw conflict(`this ${deps.label} already exists`);
    throw error;
  }
}

async function assertRoomForOneMore(tx: AnyTransaction, options: DefaultableStoreOptions, orgId: number) {
  if (options.maxPerOrg === undefined) return;
  const { n } = await tx
    .selectFrom(options.table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('org_id', '=', orgId)
    .executeTakeFirstOrThrow();
  if (Number(n) >= options.maxPerOrg) {
    throw validationError(options.label, `an organization can have at most ${options.maxPerOrg} ${options.label}s`);
  }
}

/** Moves the organization's default as an update asks; returns the updated row's is_default. */
async function moveDefaultForUpdate(
  tx: AnyTransaction,
  change: { table: DefaultableTable; orgId: number; existing: BaseRow; wantDefault: boolean | undefined },
): Promise<number> {
  const { table, orgId, existing, wantDefault } = change;
  if (wantDefault === true && existing.is_default !== 1) {
    await tx
      .updateTable(table)
      .set({ is_default: 0 })
      .where('org_id', '=', orgId)
      .where('is_default', '=', 1)
      .execute();
    return 1;
  }
  if (wantDefault === false && existing.is_default === 1) {
    // Giving up the default hands it to the oldest other one; the only one stays default.
    const other = await tx
      .selectFrom(table)
      .select('id')
      .where('org_id', '=', orgId)
      .where('id', '!=', existing.id)
      .orderBy('id')
      .limit(1)
      .executeTakeFirst();
    if (other) {
      await tx.updateTable(table).set({ is_default: 0 }).where('id', '=', existing.id).execute();
      await tx.updateTable(table).set({ is_default: 1 }).where('id', '=', other.id).execute();
      return 0;
    }
  }
  return existing.is_default;
}

async function promoteOldest(tx: AnyTransaction, table: DefaultableTable, orgId: number) {
  const oldest = await tx
    .selectFrom(table)
    .select('id')
    .where('org_id', '=', orgId)
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
  if (oldest) await tx.updateTable(table).set({ is_default: 1 }).where('id', '=', oldest.id).execute();
}

/**
 * Storage of one org-scoped delivery resource with spec 3.5's defaults: exactly one default per
 * organization and type. The first one created becomes the default; making another the default
 * unsets the previous one in the same transaction; deleting the default promotes the oldest
 * remaining one. On PostgreSQL every change locks the organization row, so concurrent requests
 * are serialized per organization (no 11th resource, no second default); SQLite writes are
 * serialized anyway. A partial unique index on (org_id) where is_default = 1 backs this up:
 * a bug that tried to commit a second default would fail rather than corrupt.
 */
export function createDefaultableStore<Row extends BaseRow>(
  deps: { db: Kysely<Database>; engine: Engine; clock: Clock },
  options: DefaultableStoreOptions,
) {
  const db = deps.db as unknown as Kysely<AnyTables>;
  const { table, label } = options;
  const visible = (orgId: number) => visibleTo(orgId, options.sharedRows);
  const transaction = { db, engine: deps.engine, label };

  return {
    async list(orgId: number, page: { offset: number; limit: number }) {
      const base = db.selectFrom(table).where(visible(orgId));
      const { total } = await base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow();
      const rows = await base.selectAll().orderBy('id').offset(page.offset).limit(page.limit).execute();
      return { rows: rows as unknown as Row[], total: Number(total) };
    },

    async get(orgId: number, id: number): Promise<Row> {
      const row = await db.selectFrom(table).selectAll().where('id', '=', id).where(visible(orgId)).executeTakeFirst();
      if (!row) throw notFound(label);
      return row as unknown as Row;
    },

    async findDefault(orgId: number): Promise<Row | undefined> {
      const row = await db
        .selectFrom(table)
        .selectAll()
        .where('org_id', '=', orgId)
        .where('is_default', '=', 1)
        .executeTakeFirst();
      return row as unknown as Row | undefined;
    },

    async create(orgId: number, values: Record<string, unknown>, wantDefault: boolean | undefined): Promise<Row> {
      return inOrgTransaction(transaction, orgId, async (tx) => {
        await assertRoomForOneMore(tx, options, orgId);
        const current = await tx
          .selectFrom(table)
          .select('id')
          .where('org_id', '=', orgId)
          .where('is_default', '=', 1)
          .executeTakeFirst();
        const makeDefault = wantDefault === true || !current;
        if (makeDefault && current)
          await tx.updateTable(table).set({ is_default: 0 }).where('id', '=', current.id).execute();
        const row = await tx
          .insertInto(table)
          .values({
            ...values,
            ...createdAt(deps.clock, values),
            org_id: orgId,
            is_default: makeDefault ? 1 : 0,
          } as never)
          .returningAll()
          .executeTakeFirstOrThrow();
        return row as unknown as Row;
      });
    },

    /**
     * Creates the organization's first row, as its default, unless it already has one. An
     * organization with rows has a default among them, so the one-default index decides: of
     * several callers at once, one inserts.
     */
    async createIfNone(orgId: number, values: Record<string, unknown>): Promise<void> {
      await db
        .insertInto(table)
        .values({ ...values, ...createdAt(deps.clock, values), org_id: orgId, is_default: 1 } as never)
        .onConflict((oc) =>
          oc
            .column('org_id')
            .where(sql<boolean>`is_default = 1`)
            .doNothing(),
        )
        .execute();
    },

    /** Full replacement of the editable values; is_default true makes it the default. */
    async update(
      orgId: number,
      id: number,
      values: Record<string, unknown>,
      wantDefault: boolean | undefined,
    ): Promise<Row> {
      return inOrgTransaction(transaction, orgId, async (tx) => {
        const existing = await tx
          .selectFrom(table)
          .selectAll()
          .where('id', '=', id)
          .where('org_id', '=', orgId)
          .executeTakeFirst();
        if (!existing) throw notFound(label);
        const isDefault = await moveDefaultForUpdate(tx, {
          table,
          orgId,
          existing: existing as unknown as BaseRow,
          wantDefault,
        });
        const row = await tx
          .updateTable(table)
          .set({ ...values, is_default: isDefault } as never)
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirstOrThrow();
        return row as unknown as Row;
      });
    },

    async delete(
      orgId: number,
      id: number,
      beforeDelete?: (row: Row, tx: Transaction<Database>) => Promise<void>,
    ): Promise<void> {
      await inOrgTransaction(transaction, orgId, async (tx) => {
        const existing = await tx
          .selectFrom(table)
          .selectAll()
          .where('id', '=', id)
          .where(visible(orgId))
          .executeTakeFirst();
        if (!existing) throw notFound(label);
        // In the same transaction: on SQLite a second connection would wait for this one forever.
        await beforeDelete?.(existing as unknown as Row, tx as unknown as Transaction<Database>);
        await tx.deleteFrom(table).where('id', '=', id).execute();
        if (existing.is_default === 1) await promoteOldest(tx, table, orgId);
      });
    },
  };
}

export type DefaultableStore<Row extends BaseRow> = ReturnType<typeof createDefaultableStore<Row>>;
