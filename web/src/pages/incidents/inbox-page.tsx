import { getRouteApi, Link, useNavigate } from '@tanstack/react-router';
import { useId, useState, type FormEvent } from 'react';
import { Field } from '../../ui/field.tsx';
import { formatDateTime, plural } from '../../ui/format.ts';
import { ErrorNotice, Loading } from '../../ui/notices.tsx';
import { Page } from '../../ui/page.tsx';
import { Pager } from '../../ui/pager.tsx';
import { useCatalog } from '../rules/catalog.ts';
import { useRuleList } from '../rules/rule-queries.ts';
import { INCIDENT_STATUSES, statusLabel, type InboxSearch, type IncidentStatus } from './inbox-search.ts';
import {
  INBOX_PAGE_SIZE,
  useAssignees,
  useBulkUpdateIncidents,
  useIncidentList,
  type Incident,
} from './incident-work-queries.ts';

const route = getRouteApi('/app/incidents');

/** The most rules the rule filter offers (one page of the rule list). */
const RULE_CHOICES = 100;

/**
 * Every incident of the organization, across its rules: filter by status, rule, source, assignee
 * and creation day; select some and give them one status; open one to work it.
 */
export function InboxPage() {
  const search = route.useSearch();
  const navigate = useNavigate();
  const incidents = useIncidentList(search);
  const [selected, setSelected] = useState<Set<number>>(new Set());
  const [done, setDone] = useState<string | null>(null);

  const show = (changes: Partial<InboxSearch>) => {
    const next: InboxSearch = { ...search, ...changes };
    if (!('page' in changes)) delete next.page;
    for (const key of Object.keys(next) as (keyof InboxSearch)[]) if (next[key] === undefined) delete next[key];
    setSelected(new Set());
    void navigate({ to: '/incidents', search: next });
  };
  const rows = incidents.data?.results ?? [];
  const pages = incidents.data ? Math.max(1, Math.ceil(incidents.data.count / INBOX_PAGE_SIZE)) : 1;

  return (
    <Page title="Incidents">
      <InboxFilters search={search} onChange={show} />
      <BulkStatus
        ids={[...selected]}
        onDone={(message) => {
          setSelected(new Set());
          setDone(message);
        }}
      />
      {done && (
        <p role="status" className="notice success">
          {done}
        </p>
      )}
      {incidents.isPending && <Loading label="Loading incidents…" />}
      <ErrorNotice error={incidents.error} />
      {incidents.data && (
        <>
          <p aria-live="polite" className="muted">
            {plural(incidents.data.count, 'incident')}
            {pages > 1 ? `, page ${search.page ?? 1} of ${pages}` : ''}
          </p>
          {rows.length > 0 && (
            <IncidentTable
              rows={rows}
              busy={incidents.isFetching}
              selected={selected}
              onSelect={(ids, on) => {
                const next = new Set(selected);
                for (const id of ids) {
                  if (on) next.add(id);
                  else next.delete(id);
                }
                setSelected(next);
              }}
            />
          )}
          <Pager
            page={search.page ?? 1}
            pages={pages}
            label="Incident pages"
            to={(target, text) => (
              <Link to="/incidents" search={{ ...search, page: target }} onClick={() => setSelected(new Set())}>
                {text}
              </Link>
            )}
          />
        </>
      )}
    </Page>
  );
}

function IncidentTable(props: {
  rows: Incident[];
  busy: boolean;
  selected: Set<number>;
  onSelect: (ids: number[], on: boolean) => void;
}) {
  const { rows, selected } = props;
  const allOnPage = rows.every((row) => selected.has(row.id));
  return (
    <div className="table-scroll">
      <table aria-label="Incidents" aria-busy={props.busy}>
        <thead>
          <tr>
            <th scope="col">
              <input
                type="checkbox"
                aria-label="Select every incident on this page"
                checked={allOnPage}
                onChange={(event) =>
                  props.onSelect(
                    rows.map((row) => row.id),
                    event.target.checked,
                  )
                }
              />
            </th>
            {['Incident', 'Rule', 'Source', 'Status', 'Assignee', 'New hits', 'Notes'].map((heading) => (
              <th key={heading} scope="col">
                {heading}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.id}>
              <td>
                <input
                  type="checkbox"
                  aria-label={`Select incident ${row.id} (${row.rule_name})`}
                  checked={selected.has(row.id)}
                  onChange={(event) => props.onSelect([row.id], event.target.checked)}
                />
              </td>
              <td>
                <Link to="/incidents/$matchId" params={{ matchId: row.id }} search={{}}>
                  #{row.id} · {formatDateTime(row.created_at)}
                </Link>
              </td>
              <td>{row.rule_name}</td>
              <td>{row.source_alias ?? row.source}</td>
              <td>
                <span className={`badge status-${row.incident_status}`}>{statusLabel(row.incident_status)}</span>
              </td>
              <td>{row.assignee?.email ?? <span className="muted">nobody</span>}</td>
              <td>{row.new_hits.toLocaleString()}</td>
              <td>{row.notes_count.toLocaleString()}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The selected incidents' new status, applied to all of them at once (or to none). */
function BulkStatus({ ids, onDone }: { ids: number[]; onDone: (message: string) => void }) {
  const [status, setStatus] = useState<IncidentStatus>('acknowledged');
  const bulk = useBulkUpdateIncidents((result, to) =>
    onDone(`${plural(result.updated, 'incident')} set to ${statusLabel(to).toLowerCase()}.`),
  );
  const submit = (event: FormEvent) => {
    event.preventDefault();
    bulk.mutate({ ids, status });
  };
  return (
    <form className="card actions" aria-label="Change the status of the selected incidents" onSubmit={submit}>
      <span aria-live="polite">{plural(ids.length, 'incident')} selected</span>
      <Field label="Set status to">
        {(control) => (
          <select {...control} value={status} onChange={(event) => setStatus(event.target.value as IncidentStatus)}>
            {INCIDENT_STATUSES.map((value) => (
              <option key={value} value={value}>
                {statusLabel(value)}
              </option>
            ))}
          </select>
        )}
      </Field>
      <button type="submit" disabled={ids.length === 0 || bulk.isPending}>
        Apply to selected
      </button>
      <ErrorNotice error={bulk.error} title="Nothing changed" />
    </form>
  );
}

function InboxFilters({
  search,
  onChange,
}: {
  search: InboxSearch;
  onChange: (changes: Partial<InboxSearch>) => void;
}) {
  const catalog = useCatalog();
  const rules = useRuleList({});
  const assignees = useAssignees();
  const legendId = useId();
  const toggle = (status: IncidentStatus, on: boolean) => {
    const next = INCIDENT_STATUSES.filter((value) => (value === status ? on : search.status?.includes(value)));
    onChange({ status: next.length ? next : undefined });
  };
  return (
    <form className="card hit-controls" aria-label="Filter incidents" onSubmit={(event) => event.preventDefault()}>
      <fieldset aria-labelledby={legendId}>
        <legend id={legendId}>Status</legend>
        {INCIDENT_STATUSES.map((status) => (
          <label key={status} className="check">
            <input
              type="checkbox"
              checked={search.status?.includes(status) ?? false}
              onChange={(event) => toggle(status, event.target.checked)}
            />
            {statusLabel(status)}
          </label>
        ))}
      </fieldset>
      <Field label="Rule">
        {(control) => (
          <select
            {...control}
            value={search.rule ?? ''}
            onChange={(event) => onChange({ rule: event.target.value ? Number(event.target.value) : undefined })}
          >
            <option value="">Any rule</option>
            {rules.data?.results.slice(0, RULE_CHOICES).map((rule) => (
              <option key={rule.id} value={rule.id}>
                {rule.name}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Source">
        {(control) => (
          <select
            {...control}
            value={search.source ?? ''}
            onChange={(event) => onChange({ source: event.target.value || undefined })}
          >
            <option value="">Any source</option>
            {catalog.data?.map((service) => (
              <option key={service.id} value={service.name}>
                {service.alias}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Assignee">
        {(control) => (
          <select
            {...control}
            value={search.assignee ?? ''}
            onChange={(event) => {
              const value = event.target.value;
              onChange({ assignee: value === 'none' ? 'none' : value ? Number(value) : undefined });
            }}
          >
            <option value="">Anyone</option>
            <option value="none">Nobody (unassigned)</option>
            {assignees.data?.map((user) => (
              <option key={user.id} value={user.id}>
                {user.email}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="From (UTC day)">
        {(control) => (
          <input
            {...control}
            type="date"
            value={search.from ?? ''}
            onChange={(event) => onChange({ from: event.target.value || undefined })}
          />
        )}
      </Field>
      <Field label="To (UTC day)">
        {(control) => (
          <input
            {...control}
            type="date"
            value={search.to ?? ''}
            onChange={(event) => onChange({ to: event.target.value || undefined })}
          />
        )}
      </Field>
    </form>
  );
}
