import type { Selectable } from 'kysely';
import type { RecipientTable } from '../../db/schema.ts';
import { normalizeEmail } from '../orgs/index.ts';
import type { DefaultableStore } from './defaultable-store.ts';
import type { RefuseIfReferenced } from './delivery-references.ts';
import { bool, iso } from './row-values.ts';

export type RecipientRow = Selectable<RecipientTable>;

const recipientView = (row: RecipientRow) => ({
  id: Number(row.id),
  email: row.email,
  is_default: bool(row.is_default),
  created_at: iso(row.created_at),
});

/** The email addresses an organization's rules notify. */
export function createRecipientService(deps: {
  store: DefaultableStore<RecipientRow>;
  refuseIfReferenced: RefuseIfReferenced;
}) {
  const { store: recipients, refuseIfReferenced } = deps;
  return {
    list: async (orgId: number, page: { offset: number; limit: number }) => {
      const { rows, total } = await recipients.list(orgId, page);
      return { results: rows.map(recipientView), total };
    },
    get: async (orgId: number, id: number) => recipientView(await recipients.get(orgId, id)),
    async create(orgId: number, input: { email: string; is_default?: boolean }) {
      return recipientView(await recipients.create(orgId, { email: normalizeEmail(input.email) }, input.is_default));
    },
    delete: (orgId: number, id: number) =>
      recipients.delete(orgId, id, (_row, tx) => refuseIfReferenced(orgId, 'recipient', id, tx)),
  };
}
