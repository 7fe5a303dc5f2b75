import { getRouteApi, Link } from '@tanstack/react-router';
import { Fragment, useState } from 'react';
import { formatDateTime, plural } from '../../ui/format.ts';
import { ErrorNotice, Loading } from '../../ui/notices.tsx';
import { Page } from '../../ui/page.tsx';
import { Pager } from '../../ui/pager.tsx';
import { Table } from '../../ui/table.tsx';
import { ExclusionList } from '../incidents/exclusion-list.tsx';
import { MatchesOverTime } from '../incidents/matches-over-time.tsx';
import { useRecipients, useSenders, useTemplates, useWebhooks } from '../settings/delivery-queries.ts';
import { SiemTargetsSummary } from './siem-targets-field.tsx';
import { humanize } from './args-fields.tsx';
import { useCatalog } from './catalog.ts';
import { frequencyLabel } from './frequency.ts';
import { RuleDeleteRestore } from './rule-actions.tsx';
import { PauseControl, RulePreview, RunNowControl } from './rule-steering.tsx';
import { DeliveryLog } from '../settings/delivery-log.tsx';
import { useRule, useRuleMatches, type Rule } from './rule-queries.ts';

const route = getRouteApi('/app/rules/$ruleId');
const RUNS_PER_PAGE = 10;

/** One rule: what it watches, where it notifies, its matches over time and its run history. */
export function RulePage() {
  const { ruleId } = route.useParams();
  const rule = useRule(ruleId);
  return (
    <Page
      title={rule.data?.name ?? 'Monitoring rule'}
      actions={
        rule.data && (
          <div className="actions">
            {!rule.data.is_deleted && (
              <Link to="/rules/$ruleId/edit" params={{ ruleId }} className="button">
                Edit
              </Link>
            )}
            <RuleDeleteRestore rule={rule.data} />
          </div>
        )
      }
    >
      <p>
        <Link to="/rules">All rules</Link>
      </p>
      {rule.isPending && <Loading />}
      <ErrorNotice error={rule.error} />
      {rule.data && (
        <>
          {rule.data.is_deleted && (
            <p className="notice warning">
              Deleted {formatDateTime(rule.data.deleted_at)}: it does not run, and its delivery settings and exclusions
              were detached. Restoring brings them back.
            </p>
          )}
          <RuleSummary rule={rule.data} />
          {!rule.data.is_deleted && (
            <section aria-labelledby="schedule">
              <h2 id="schedule">Schedule</h2>
              <div className="card">
                <PauseControl rule={rule.data} />
                <RunNowControl rule={rule.data} />
              </div>
            </section>
          )}
          <section aria-labelledby="over-time">
            <h2 id="over-time">Matches over time</h2>
            <MatchesOverTime ruleId={ruleId} />
          </section>
          <RunHistory ruleId={ruleId} />
          <section aria-labelledby="preview">
            <h2 id="preview">Preview</h2>
            <RulePreview rule={rule.data} />
          </section>
          <section aria-labelledby="deliveries">
            <h2 id="deliveries">Deliveries</h2>
            <DeliveryLog ruleId={ruleId} />
          </section>
          {!rule.data.is_deleted && (
            <section aria-labelledby="exclusions">
              <h2 id="exclusions">Exclusions</h2>
              <ExclusionList ruleId={ruleId} />
            </section>
          )}
        </>
      )}
    </Page>
  );
}

const argText = (value: unknown) =>
  Array.isArray(value) ? value.join(', ') : typeof value === 'boolean' ? (value ? 'yes' : 'no') : String(value);

function RuleSummary({ rule }: { rule: Rule }) {
  const catalog = useCatalog();
  const recipients = useRecipients();
  const senders = useSenders();
  const templates = useTemplates();
  const webhooks = useWebhooks();
  const service = catalog.data?.find((entry) => entry.id === rule.service);
  const nameOf = <T extends { id: number }>(items: T[] | undefined, id: number | null, name: (item: T) => string) => {
    if (id === null) return 'none';
    const item = items?.find((entry) => entry.id === id);
    return item ? name(item) : `#${id}`;
  };
  return (
    <div className="card summary-grid">
      <dl>
        <dt>Service</dt>
        <dd>{service?.alias ?? `service ${rule.service}`}</dd>
        {Object.entries(rule.args).map(([name, value]) => (
          <Fragment key={name}>
            <dt>{humanize(name)}</dt>
            <dd>
              <code>{argText(value)}</code>
            </dd>
          </Fragment>
        ))}
        <dt>Frequency</dt>
        <dd>{frequencyLabel(rule.frequency)}</dd>
        <dt>TLP (exports)</dt>
        <dd>TLP:{rule.tlp.toUpperCase()}</dd>
      </dl>
      <dl>
        <dt>Last run</dt>
        <dd>{formatDateTime(rule.last_run)}</dd>
        <dt>Hits (not excluded)</dt>
        <dd>{rule.total_matches_count.toLocaleString()}</dd>
        <dt>Alerts sent</dt>
        <dd>{rule.total_alerts_count.toLocaleString()}</dd>
        <dt>Created</dt>
        <dd>{formatDateTime(rule.created_at)}</dd>
      </dl>
      <dl>
        <dt>Recipients</dt>
        <dd>
          {rule.recipients.length
            ? rule.recipients.map((id) => nameOf(recipients.data, id, (r) => r.email)).join(', ')
            : 'none'}
        </dd>
        <dt>Sender</dt>
        <dd>{rule.sender === null ? 'system sender' : nameOf(senders.data, rule.sender, (s) => s.email)}</dd>
        <dt>Template</dt>
        <dd>{nameOf(templates.data, rule.email_template, (t) => t.name)}</dd>
        <dt>Webhook</dt>
        <dd>{nameOf(webhooks.data, rule.webhook, (w) => w.name)}</dd>
        <SiemTargetsSummary ids={rule.siem_targets} />
      </dl>
    </div>
  );
}

/** The rule's runs with hits, newest first, each opening its incident page. */
function RunHistory({ ruleId }: { ruleId: number }) {
  const [page, setPage] = useState(1);
  const matches = useRuleMatches(ruleId, page, RUNS_PER_PAGE);
  const pages = matches.data ? Math.max(1, Math.ceil(matches.data.count / RUNS_PER_PAGE)) : 1;
  return (
    <section aria-labelledby="runs">
      <h2 id="runs">Run history</h2>
      <p className="muted">Runs that found nothing are not listed; they only move the rule's last run.</p>
      {matches.isPending && <Loading />}
      <ErrorNotice error={matches.error} />
      {matches.data?.count === 0 && <p>No runs with hits yet.</p>}
      {matches.data && matches.data.results.length > 0 && (
        <Table headings={['Run', 'Window', 'Status', 'New hits', 'Excluded']} actions="Open">
          {matches.data.results.map((match) => (
            <tr key={match.id}>
              <td>{formatDateTime(match.created_at)}</td>
              <td>
                {match.window_start ? formatDateTime(match.window_start) : 'everything'} –{' '}
                {formatDateTime(match.window_end)}
              </td>
              <td>
                {match.status}
                {match.progress && ` (${Math.round((100 * match.progress.done) / Math.max(match.progress.total, 1))}%)`}
              </td>
              <td>{match.new_hits.toLocaleString()}</td>
              <td>{match.excluded_hits.toLocaleString()}</td>
              <td>
                <Link
                  to="/incidents/$matchId"
                  params={{ matchId: match.id }}
                  aria-label={`Open the match of ${formatDateTime(match.created_at)}, ${plural(match.new_hits, 'new hit')}`}
                >
                  Open
                </Link>
              </td>
            </tr>
          ))}
        </Table>
      )}
      <Pager
        page={page}
        pages={pages}
        label="Run history pages"
        previous="Newer"
        next="Older"
        to={(target, text) => (
          <button type="button" onClick={() => setPage(target)}>
            {text}
          </button>
        )}
      />
    </section>
  );
}
