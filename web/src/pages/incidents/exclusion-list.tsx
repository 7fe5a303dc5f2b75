import { formatDateTime } from '../../ui/format.ts';
import { ErrorNotice, Loading } from '../../ui/notices.tsx';
import { useDeleteExclusion, useExclusions, type Exclusion } from '../rules/rule-queries.ts';
import { HIT_KEY } from './hit-fields.ts';

/** How an exclusion reads: "channel_username is golf_b", or "one hit (12:345)". */
export const describeExclusion = (exclusion: Pick<Exclusion, 'field' | 'value'>) =>
  exclusion.field === HIT_KEY ? `one hit (${exclusion.value})` : `${exclusion.field} is ${exclusion.value}`;

/** A rule's exclusions; removing one makes its hits count again, in every match of the rule. */
export function ExclusionList({ ruleId }: { ruleId: number }) {
  const exclusions = useExclusions(ruleId);
  const remove = useDeleteExclusion();
  if (exclusions.isPending) return <Loading />;
  if (!exclusions.data) return <ErrorNotice error={exclusions.error} />;
  return (
    <>
      <ErrorNotice error={remove.error} title="Not removed" />
      {exclusions.data.length === 0 ? (
        <p className="muted">No exclusions: every hit counts.</p>
      ) : (
        <ul className="exclusions">
          {exclusions.data.map((exclusion) => (
            <li key={exclusion.id}>
              <span>
                Excluded: <strong>{describeExclusion(exclusion)}</strong>{' '}
                <span className="muted">since {formatDateTime(exclusion.created_at)}</span>
              </span>
              <button
                type="button"
                onClick={() => remove.mutate(exclusion)}
                disabled={remove.isPending}
                aria-label={`Count again: ${describeExclusion(exclusion)}`}
              >
                Count again
              </button>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
