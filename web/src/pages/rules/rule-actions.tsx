import { ConfirmButton } from '../../ui/confirm-button.tsx';
import { ErrorNotice } from '../../ui/notices.tsx';
import { useDeleteOrRestoreRule, type Rule } from './rule-queries.ts';

/**
 * Delete (spec 3.2: a soft delete that snapshots the rule and detaches its delivery settings) or
 * restore it from that snapshot, with the server's reason when it refuses (a restore whose name
 * is taken again, or past the rule limit).
 */
export function RuleDeleteRestore({ rule }: { rule: Rule }) {
  const change = useDeleteOrRestoreRule(rule);
  return (
    <>
      {rule.is_deleted ? (
        <button
          type="button"
          onClick={() => change.mutate('restore')}
          disabled={change.isPending}
          aria-label={`Restore ${rule.name}`}
        >
          Restore
        </button>
      ) : (
        <ConfirmButton
          label={`Delete ${rule.name}`}
          confirm={`Delete ${rule.name}`}
          onConfirm={() => change.mutate('delete')}
          disabled={change.isPending}
        >
          Delete
        </ConfirmButton>
      )}
      <ErrorNotice error={change.error} title={rule.is_deleted ? 'Not restored' : 'Not deleted'} />
    </>
  );
}
