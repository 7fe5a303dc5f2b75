import { getRouteApi, Link } from '@tanstack/react-router';
import { formatDateTime } from '../../ui/format.ts';
import { ErrorNotice, Loading } from '../../ui/notices.tsx';
import { Page } from '../../ui/page.tsx';
import { useCatalog } from '../rules/catalog.ts';
import { useRule, type Match } from '../rules/rule-queries.ts';
import { ExclusionList } from './exclusion-list.tsx';
import { HitList } from './hit-list.tsx';
import { ExportFormatButtons } from '../search/export-buttons.tsx';
import { INCIDENT_EXPORT_FORMATS, useIncidentExport, useMatch } from './incident-queries.ts';
import { IncidentWork } from './incident-work.tsx';
import { MatchesOverTime } from './matches-over-time.tsx';
import { MispEventButton } from './misp-event-button.tsx';
import { ruleTerms } from './presenters/presenters.tsx';

const route = getRouteApi('/app/incidents/$matchId');

/**
 * The page a notification links to (`{match_detail_link}`, `results_url`): one match of a rule,
 * its counts, its hits to filter, sort and exclude, and the rule's matches over time. Signing
 * in comes first (the app route's guard), then this address again.
 */
export function IncidentPage() {
  const { matchId } = route.useParams();
  const match = useMatch(matchId);
  const rule = useRule(match.data?.rule_id);
  const catalog = useCatalog();
  const service = catalog.data?.find((entry) => entry.id === rule.data?.service);

  return (
    <Page title={rule.data ? `Incident: ${rule.data.name}` : 'Incident'}>
      {match.isPending && <Loading />}
      <ErrorNotice error={match.error ?? rule.error ?? catalog.error} />
      {match.data && rule.data && (
        <>
          <p>
            <Link to="/incidents">All incidents</Link> ·{' '}
            <Link to="/rules/$ruleId" params={{ ruleId: rule.data.id }}>
              {rule.data.name}
            </Link>
            {service && <span className="muted"> · {service.alias}</span>}
            {rule.data.is_deleted && <span className="badge">rule deleted</span>}
          </p>
          <Counts match={match.data} />
          <IncidentExport matchId={match.data.id} />
          <MispEventButton matchId={match.data.id} />
          <IncidentWork matchId={match.data.id} ruleDeleted={rule.data.is_deleted} />
          {service && (
            <HitList
              match={match.data}
              service={service}
              ruleDeleted={rule.data.is_deleted}
              terms={ruleTerms(rule.data.args)}
            />
          )}
          <section aria-labelledby="exclusions">
            <h2 id="exclusions">Exclusions of this rule</h2>
            <p className="muted">An exclusion applies to every match of the rule, and to its next runs.</p>
            <ExclusionList ruleId={rule.data.id} />
          </section>
          <section aria-labelledby="over-time">
            <h2 id="over-time">Matches of this rule over time</h2>
            <MatchesOverTime ruleId={rule.data.id} highlight={match.data.id} />
          </section>
        </>
      )}
    </Page>
  );
}

/** The incident's hits as CSV, JSON or a STIX 2.1 bundle (docs/stix.md), marked with the rule's TLP. */
function IncidentExport({ matchId }: { matchId: number }) {
  return (
    <ExportFormatButtons
      label="Export hits"
      note="Export hits"
      formats={INCIDENT_EXPORT_FORMATS}
      download={useIncidentExport(matchId)}
    />
  );
}

/** The match's figures (the notification's {number_of_hits}, {total_results}, {excluded_count}). */
function Counts({ match }: { match: Match }) {
  return (
    <section aria-label="Counts" className="card">
      <dl className="counts" aria-live="polite">
        <div>
          <dt>New hits</dt>
          <dd data-testid="count-new">{match.new_hits.toLocaleString()}</dd>
        </div>
        <div>
          <dt>Excluded</dt>
          <dd data-testid="count-excluded">{match.excluded_hits.toLocaleString()}</dd>
        </div>
        <div>
          <dt>All hits</dt>
          <dd>{match.total_hits.toLocaleString()}</dd>
        </div>
      </dl>
      <p className="muted">
        Run of {formatDateTime(match.created_at)}, covering{' '}
        {match.window_start ? `${formatDateTime(match.window_start)} to` : 'everything up to'}{' '}
        {formatDateTime(match.window_end)}.
        {match.stored_hits < match.total_hits && ` The first ${match.stored_hits.toLocaleString()} hits are kept.`}
      </p>
      {match.status === 'pending' && (
        <p role="status">
          The source is still searching
          {match.progress &&
            `: ${Math.round((100 * match.progress.done) / Math.max(match.progress.total, 1))}% of the ${match.progress.unit} done`}
          . This page updates by itself.
        </p>
      )}
    </section>
  );
}
