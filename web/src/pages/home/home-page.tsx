import { Link } from '@tanstack/react-router';
import { useAccount } from '../../auth/account.ts';
import { formatDateTime, plural } from '../../ui/format.ts';
import { ErrorNotice, Loading } from '../../ui/notices.tsx';
import { Page } from '../../ui/page.tsx';
import { Table } from '../../ui/table.tsx';
import { useIncidentCounts } from '../incidents/incident-work-queries.ts';
import {
  HOME_DAYS,
  useCollectors,
  useMatchStats,
  useNewestIncidents,
  useSourceFreshness,
  type CollectorStatus,
  type MatchStats,
} from './home-queries.ts';

/** The home page: what is new, how busy the rules are, how fresh each source is, and (for operators) the collectors. */
export function HomePage() {
  const account = useAccount();
  return (
    <Page title="Home">
      <NewIncidents />
      <MatchesByDay />
      <SourceFreshness />
      {account.data?.role === 'system' && <CollectorHealth />}
    </Page>
  );
}

function NewIncidents() {
  const counts = useIncidentCounts();
  const newest = useNewestIncidents();
  const count = counts.data?.new;
  return (
    <section className="card" aria-labelledby="home-new-incidents">
      <h2 id="home-new-incidents">New incidents</h2>
      <ErrorNotice error={counts.error ?? newest.error} />
      {newest.isPending && <Loading label="Loading the new incidents…" />}
      {count !== undefined && (
        <p data-testid="home-new-count">
          {count === 0 ? 'No new incidents.' : `${plural(count, 'new incident')} to work.`}
        </p>
      )}
      {newest.data && newest.data.results.length > 0 && (
        <ul aria-label="Newest new incidents">
          {newest.data.results.map((incident) => (
            <li key={incident.id}>
              <Link to="/incidents/$matchId" params={{ matchId: incident.id }} search={{}}>
                #{incident.id} {incident.rule_name}
              </Link>{' '}
              <span className="muted">
                {plural(incident.new_hits, 'new hit')} · {incident.source_alias ?? incident.source ?? 'unknown source'}{' '}
                · {formatDateTime(incident.created_at)}
              </span>
            </li>
          ))}
        </ul>
      )}
      <p>
        <Link to="/incidents" search={{ status: ['new'] }}>
          All new incidents
        </Link>
      </p>
    </section>
  );
}

function MatchesByDay() {
  const stats = useMatchStats();
  return (
    <>
      <section className="card" aria-labelledby="home-matches">
        <h2 id="home-matches">Matches in the last {HOME_DAYS} days</h2>
        {stats.isPending && <Loading label="Loading the matches…" />}
        <ErrorNotice error={stats.error} />
        {stats.data && <DayTable stats={stats.data} />}
        <p>
          <Link to="/incidents" search={{}}>
            All incidents
          </Link>
        </p>
      </section>
      <section className="card" aria-labelledby="home-busiest">
        <h2 id="home-busiest">Busiest rules</h2>
        {stats.data?.busiest_rules.length === 0 && <p>No rule matched in the last {HOME_DAYS} days.</p>}
        {stats.data && stats.data.busiest_rules.length > 0 && (
          <Table label="Busiest rules" headings={['Rule', 'Source', 'New hits', 'Matches']}>
            {stats.data.busiest_rules.map((rule) => (
              <tr key={rule.rule_id}>
                <td>
                  <Link to="/rules/$ruleId" params={{ ruleId: rule.rule_id }}>
                    {rule.rule_name}
                  </Link>
                </td>
                <td>{rule.source ?? '—'}</td>
                <td>{rule.new_hits.toLocaleString()}</td>
                <td>{rule.matches.toLocaleString()}</td>
              </tr>
            ))}
          </Table>
        )}
        <p>
          <Link to="/rules" search={{}}>
            All rules
          </Link>
        </p>
      </section>
    </>
  );
}

/** Days with matches, newest first, each with a bar scaled to the busiest day; the total in words. */
function DayTable({ stats }: { stats: MatchStats }) {
  const active = stats.by_day.filter((day) => day.matches > 0).reverse();
  if (active.length === 0) return <p>No matches in the last {HOME_DAYS} days.</p>;
  const most = Math.max(...active.map((day) => day.new_hits), 1);
  const total = active.reduce((sum, day) => sum + day.matches, 0);
  const hits = active.reduce((sum, day) => sum + day.new_hits, 0);
  return (
    <>
      <p>
        {plural(total, 'match', 'matches')} with {plural(hits, 'new hit')} on {plural(active.length, 'day')}.
      </p>
      <Table label="Matches by day" headings={['Day (UTC)', 'Matches', 'New hits']}>
        {active.map((day) => (
          <tr key={day.day}>
            <td>{day.day}</td>
            <td>{day.matches.toLocaleString()}</td>
            <td>
              <span className="day-bar" aria-hidden="true" style={{ width: `${(day.new_hits / most) * 8}rem` }} />{' '}
              {day.new_hits.toLocaleString()}
            </td>
          </tr>
        ))}
      </Table>
    </>
  );
}

/** How fresh each source's data is: what a rule on it can find now. */
function SourceFreshness() {
  const freshness = useSourceFreshness();
  return (
    <section className="card" aria-labelledby="home-sources">
      <h2 id="home-sources">Newest data per source</h2>
      {freshness.isPending && <Loading label="Loading the sources…" />}
      <ErrorNotice error={freshness.error} />
      {freshness.data && (
        <Table label="Newest data per source" headings={['Source', 'Newest record']} actions="Watch">
          {freshness.data.map((source) => (
            <tr key={source.id}>
              <td>{source.alias}</td>
              <td>{source.newest_record_at ? formatDateTime(source.newest_record_at) : 'No data yet'}</td>
              <td>
                {/* The source's name is read out, not shown: the row already shows it, and a name
                    given only by aria-label would not hold the words people see (WCAG 2.5.3). */}
                <Link to="/rules/new" search={{ service: source.id }}>
                  Watch <span className="visually-hidden">{source.alias} </span>with a rule
                </Link>
              </td>
            </tr>
          ))}
        </Table>
      )}
      <p>
        <Link to="/search" search={{}}>
          Search messages
        </Link>{' '}
        · <Link to="/search/quick">Quick searches of leaked credentials</Link>
      </p>
    </section>
  );
}

function collectorState(collector: CollectorStatus): string {
  if (!collector.enabled) return 'Disabled';
  if (collector.consecutive_failures > 0)
    return `Failing (${plural(collector.consecutive_failures, 'failure')} in a row): ${collector.last_error ?? ''}`;
  if (collector.running) return 'Running';
  return collector.runs === 0 ? 'Not run yet' : 'Healthy';
}

/** What GET /service/collectors/ knows of each collector: its last run, its errors, when it runs next. */
function CollectorHealth() {
  const collectors = useCollectors(true);
  return (
    <section className="card" aria-labelledby="home-collectors">
      <h2 id="home-collectors">Collectors</h2>
      {collectors.isPending && <Loading label="Loading the collectors…" />}
      <ErrorNotice error={collectors.error} />
      {collectors.data?.length === 0 && <p>No collector is configured.</p>}
      {collectors.data && collectors.data.length > 0 && (
        <Table label="Collectors" headings={['Collector', 'Source', 'State', 'Last success', 'Next run', 'Items']}>
          {collectors.data.map((collector) => (
            <tr key={collector.name}>
              <td>{collector.name}</td>
              <td>{collector.source ?? 'every source'}</td>
              <td>{collectorState(collector)}</td>
              <td>{formatDateTime(collector.last_success_at)}</td>
              <td>{collector.next_run_at ? formatDateTime(collector.next_run_at) : '—'}</td>
              <td>{collector.items_total.toLocaleString()}</td>
            </tr>
          ))}
        </Table>
      )}
    </section>
  );
}
