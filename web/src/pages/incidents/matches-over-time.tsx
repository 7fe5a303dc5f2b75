import { lazy, Suspense } from 'react';
import { formatDateTime, plural } from '../../ui/format.ts';
import { ErrorNotice, Loading } from '../../ui/notices.tsx';
import { CHART_MATCHES, useRuleMatches } from '../rules/rule-queries.ts';

const MatchesChart = lazy(() => import('./matches-chart.tsx'));

/**
 * A rule's matches over time (its latest runs with hits) as a chart, with the same figures in a
 * sentence for screen readers. `highlight` marks the match a page is about.
 */
export function MatchesOverTime({ ruleId, highlight }: { ruleId: number; highlight?: number }) {
  const matches = useRuleMatches(ruleId);
  if (matches.isPending) return <Loading label="Loading the rule's matches…" />;
  if (!matches.data) return <ErrorNotice error={matches.error} />;
  const list = matches.data.results;
  if (list.length === 0) return <p className="muted">No runs with hits yet.</p>;
  const busiest = list.reduce((top, match) => (match.new_hits > top.new_hits ? match : top), list[0]!);
  const oldest = list.at(-1)!;
  const summary = `${plural(list.length, 'run')} with hits${matches.data.count > CHART_MATCHES ? ` (the latest ${CHART_MATCHES} of ${matches.data.count})` : ''} from ${formatDateTime(oldest.window_end)} to ${formatDateTime(list[0]!.window_end)}; the most new hits, ${busiest.new_hits.toLocaleString()}, in the run of ${formatDateTime(busiest.window_end)}.`;
  return (
    <figure className="chart" aria-label="Matches over time">
      <Suspense fallback={<Loading label="Loading the chart…" />}>
        <div aria-hidden="true">
          <MatchesChart matches={list} highlight={highlight} />
        </div>
      </Suspense>
      <figcaption className="muted">{summary}</figcaption>
    </figure>
  );
}
