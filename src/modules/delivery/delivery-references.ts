import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema.ts';
import { AppError } from '../../lib/errors.ts';

export type DeliveryKind = 'recipient' | 'sender' | 'template' | 'webhook' | 'siem_target';

/** Active rules that reference a delivery resource (supplied by the rules module). */
export type ReferenceCheck = (
  orgId: number,
  kind: DeliveryKind,
  id: number,
  executor: Transaction<Database>,
) => Promise<{ id: number; name: string }[]>;

/** Refuses, inside the deleting transaction, to delete what an active rule still uses. */
export type RefuseIfReferenced = (
  orgId: number,
  kind: DeliveryKind,
  id: number,
  tx: Transaction<Database>,
) => Promise<void>;

/**
 * The delivery module cannot import the rules module (rules import delivery), so the rules
 * module hands its check in once it exists; until then nothing is referenced.
 */
export function createReferenceGuard() {
  let referenceCheck: ReferenceCheck = async () => [];
  const refuseIfReferenced: RefuseIfReferenced = async (orgId, kind, id, tx) => {
    const rules = await referenceCheck(orgId, kind, id, tx);
    if (rules.length) {
      throw new AppError(
        'conflict',
        `this ${kind} is used by active monitoring rules: ${rules.map((r) => `${r.name} (id ${r.id})`).join(', ')}; detach or delete them first`,
        {
          extra: { rules },
        },
      );
    }
  };
  return {
    setReferenceCheck(check: ReferenceCheck) {
      referenceCheck = check;
    },
    refuseIfReferenced,
  };
}
