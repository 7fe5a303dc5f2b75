import type { Selectable, Transaction } from 'kysely';
import type { Engine } from '../../db/store.ts';
import type { AlertRuleTable, Database } from '../../db/schema.ts';
import { notFound } from '../../lib/errors.ts';

/**
 * The rule's row, locked until the transaction ends: changes to one rule and to what its
 * deletion snapshot covers (update, delete, restore, its exclusions) take turns, and each sees
 * what the one before it committed. Without it, two deletes at once both snapshotted the rule,
 * the second after the first had detached its recipients and exclusions, and a restore brought
 * back none; an exclusion added while the rule was being deleted stayed on the deleted rule,
 * outside its snapshot. (SQLite transactions take turns anyway.)
 */
export async function lockRule(tx: Transaction<Database>, engine: Engine, orgId: number, id: number): Promise<Selectable<AlertRuleTable>> {
  const query = tx.selectFrom('alert_rules').selectAll().where('org_id', '=', orgId).where('id', '=', id);
  const row = await (engine === 'postgres' ? query.forUpdate() : query).executeTakeFirst();
  if (!row) throw notFound('monitoring rule');
  return row;
}
