import { getRouteApi, Link, useNavigate } from '@tanstack/react-router';
import { useId } from 'react';
import { formatDateTime } from '../../ui/format.ts';
import { ErrorNotice, Loading } from '../../ui/notices.tsx';
import { Page } from '../../ui/page.tsx';
import { Pager } from '../../ui/pager.tsx';
import { Table } from '../../ui/table.tsx';
import { useRecipients, useSenders, useTemplates, useWebhooks } from '../settings/delivery-queries.ts';
import { useCatalog } from './catalog.ts';
import { frequencyLabel } from './frequency.ts';
import { RuleDeleteRestore } from './rule-actions.tsx';
import { RULES_PAGE_SIZE, useRuleList } from './rule-queries.ts';
import type { RulesSearch } from './rules-search.ts';
import { usePausedRuleIds } from './steering-queries.ts';

const route = getRouteApi('/app/rules');

/** The organization's monitoring rules (spec 4.5 list) with its filters; each opens its page. */
export function RulesPage() {
  const search = route.useSearch();
  const page = search.page ?? 1;
  const catalog = useCatalog();
  const rules = useRuleList(search);
  const paused = usePausedRuleIds();
  const serviceName = (id: number) => catalog.data?.find((service) => service.id === id)?.alias ?? `service ${id}`;
  const pages = rules.data ? Math.max(1, Math.ceil(rules.data.count / RULES_PAGE_SIZE)) : 1;

  return (
    <Page
      title="Monitoring rules"
      actions={
        <Link to="/rules/new" className="button primary">
          New rule
        </Link>
      }
    >
      <RuleFilters search={search} />
      {rules.isPending && <Loading />}
      <ErrorNotice error={rules.error} />
      {rules.data?.count === 0 && (
        <p>
          No rules {Object.keys(search).length ? 'match these filters' : 'yet'}. A rule watches a source for an asset
          and notifies you of new hits: <Link to="/rules/new">create one</Link>, or run a{' '}
          <Link to="/search">search</Link> and make a rule of it.
        </p>
      )}
      {rules.data && rules.data.results.length > 0 && (
        <Table
          headings={['Rule', 'Service', 'Frequency', 'Last run', 'Hits', 'Alerts']}
          actions="Actions"
          label={`Monitoring rules, page ${page} of ${pages}`}
        >
          {rules.data.results.map((rule) => (
            <tr key={rule.id} className={rule.is_deleted ? 'muted' : undefined}>
              <td>
                <Link to="/rules/$ruleId" params={{ ruleId: rule.id }}>
                  {rule.name}
                </Link>
                {rule.is_deleted && <span className="badge">deleted</span>}
                {paused.data?.has(rule.id) && <span className="badge">paused</span>}
              </td>
              <td>{serviceName(rule.service)}</td>
              <td>{frequencyLabel(rule.frequency)}</td>
              <td>{formatDateTime(rule.last_run)}</td>
              <td>{rule.total_matches_count.toLocaleString()}</td>
              <td>{rule.total_alerts_count.toLocaleString()}</td>
              <td>
                <div className="actions">
                  {!rule.is_deleted && (
                    <Link to="/rules/$ruleId/edit" params={{ ruleId: rule.id }} aria-label={`Edit ${rule.name}`}>
                      Edit
                    </Link>
                  )}
                  <RuleDeleteRestore rule={rule} />
                </div>
              </td>
            </tr>
          ))}
        </Table>
      )}
      <Pager
        page={page}
        pages={pages}
        to={(target, text) => (
          <Link to="/rules" search={{ ...search, page: target }}>
            {text}
          </Link>
        )}
      />
    </Page>
  );
}

/** include_deleted and "rules attached to" filters, kept in the address. */
function RuleFilters({ search }: { search: RulesSearch }) {
  const navigate = useNavigate();
  const ids = { recipient: useId(), sender: useId(), template: useId(), webhook: useId() };
  const recipients = useRecipients();
  const senders = useSenders();
  const templates = useTemplates();
  const webhooks = useWebhooks();
  const set = (changes: Partial<RulesSearch>) => {
    const next: RulesSearch = { ...search, ...changes };
    delete next.page;
    for (const key of Object.keys(next) as (keyof RulesSearch)[]) if (next[key] === undefined) delete next[key];
    void navigate({ to: '/rules', search: next });
  };
  const filters = [
    { key: 'recipient', label: 'Recipient', items: recipients.data?.map((r) => ({ id: r.id, name: r.email })) },
    { key: 'sender', label: 'Sender', items: senders.data?.map((s) => ({ id: s.id, name: s.email })) },
    { key: 'template', label: 'Template', items: templates.data?.map((t) => ({ id: t.id, name: t.name })) },
    { key: 'webhook', label: 'Webhook', items: webhooks.data?.map((w) => ({ id: w.id, name: w.name })) },
  ] as const;
  return (
    <details className="card" open={Object.keys(search).some((key) => key !== 'page')}>
      <summary>Filters</summary>
      <label className="check">
        <input
          type="checkbox"
          checked={search.deleted ?? false}
          onChange={(event) => set({ deleted: event.target.checked || undefined })}
        />
        Include deleted rules
      </label>
      <div className="filter-grid">
        {filters.map((filter) => (
          <div className="field" key={filter.key}>
            <label htmlFor={ids[filter.key]}>{filter.label}</label>
            <select
              id={ids[filter.key]}
              value={search[filter.key] ?? ''}
              onChange={(event) => set({ [filter.key]: event.target.value ? Number(event.target.value) : undefined })}
            >
              <option value="">Any</option>
              {filter.items?.map((item) => (
                <option key={item.id} value={item.id}>
                  {item.name}
                </option>
              ))}
            </select>
          </div>
        ))}
      </div>
    </details>
  );
}
