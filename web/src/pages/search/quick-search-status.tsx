import { ApiError } from '../../api/errors.ts';
import { resetIn } from '../../ui/format.ts';
import { ErrorNotice } from '../../ui/notices.tsx';
import { useSearchCapacity, type QuickSearchSlug } from './quick-queries.ts';

/** "87 of 100 left today, resets in 9 h": the search's daily quota as last read. */
export function QuotaLeft({ slug }: { slug: QuickSearchSlug }) {
  const capacity = useSearchCapacity();
  const day = capacity.data?.services
    .find((service) => service.service_slug === slug)
    ?.limits.find((limit) => /day/i.test(limit.period));
  if (!day) return null;
  return (
    <p className="muted" data-testid={`quota-${slug}`}>
      {day.remaining.toLocaleString()} of {day.limit.toLocaleString()} searches left today, resets{' '}
      {resetIn(day.reset_seconds)}
    </p>
  );
}

/** A failed search: the field's own error goes beside its input; a 429 says when the quota is back. */
export function SearchError({ error, fields }: { error: unknown; fields: string[] }) {
  if (error instanceof ApiError && error.status === 429) {
    const wait = error.retryAfterSeconds;
    return (
      <div className="notice error" role="alert">
        The daily quota of this search is used up{wait !== undefined ? `; it resets ${resetIn(wait)}` : ''}.
      </div>
    );
  }
  return <ErrorNotice error={error} fieldsShown={fields} />;
}
