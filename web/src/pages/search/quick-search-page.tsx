import { useState, type FormEvent, type ReactNode } from 'react';
import { ApiError } from '../../api/errors.ts';
import { Field } from '../../ui/field.tsx';
import { formatDateTime, plural } from '../../ui/format.ts';
import { ErrorNotice } from '../../ui/notices.tsx';
import { Page } from '../../ui/page.tsx';
import { Table } from '../../ui/table.tsx';
import { AccountsSearch } from './accounts-search.tsx';
import {
  useDomainQuickSearch,
  useEmailQuickSearch,
  useSearchCapacity,
  type DomainReport,
  type EmailReport,
  type QuickSearchSlug,
  type Sighting,
} from './quick-queries.ts';
import { QuotaLeft, SearchError } from './quick-search-status.tsx';

/**
 * Search → Quick searches: what the credential store knows of a domain, an email address, or
 * credentials by login, site and password range (docs/api.md "Quick searches"), each with its
 * remaining daily quota.
 */
export function QuickSearchPage() {
  const capacity = useSearchCapacity();
  const load = capacity.data?.load;
  return (
    <Page title="Quick searches">
      <p className="muted">
        Questions to the leaked-credentials store. Each search counts against a daily quota of the organization (UTC
        days); a failed one does not. Passwords are always shown masked.
        {load &&
          ` Background work now: ${plural(load.queued_jobs, 'job')} queued, ${load.running_jobs} running, ${plural(load.pending_matches, 'match', 'matches')} being filled.`}
      </p>
      <ErrorNotice error={capacity.error} title="The quotas could not be read" />
      <DomainSearch />
      <EmailSearch />
      <AccountsSearch />
    </Page>
  );
}

const fieldError = (error: unknown, field: string) =>
  error instanceof ApiError ? error.fieldMessage(field) : undefined;

function OneFieldSearch(props: {
  slug: QuickSearchSlug;
  title: string;
  field: 'domain' | 'email';
  label: string;
  hint: string;
  type: 'text' | 'email';
  pending: boolean;
  error: unknown;
  onSearch: (value: string) => void;
  children: ReactNode;
}) {
  const [value, setValue] = useState('');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    props.onSearch(value.trim());
  };
  const headingId = `${props.field}-search`;
  return (
    <section className="card" aria-labelledby={headingId}>
      <h2 id={headingId}>{props.title}</h2>
      <QuotaLeft slug={props.slug} />
      <form onSubmit={submit} aria-label={props.title} noValidate>
        <SearchError error={props.error} fields={[props.field]} />
        <Field label={props.label} hint={props.hint} error={fieldError(props.error, props.field)}>
          {(control) => (
            <input {...control} type={props.type} value={value} onChange={(event) => setValue(event.target.value)} />
          )}
        </Field>
        <button type="submit" className="primary" disabled={props.pending || !value.trim()}>
          {props.pending ? 'Searching…' : 'Search'}
        </button>
      </form>
      {props.children}
    </section>
  );
}

function DomainSearch() {
  const search = useDomainQuickSearch();
  return (
    <OneFieldSearch
      slug="domain_quick_search"
      title="Domain"
      field="domain"
      label="Domain"
      hint="A domain, subdomain or URL: it is reduced to the registrable domain."
      type="text"
      pending={search.isPending}
      error={search.error}
      onSearch={(domain) => search.mutate(domain)}
    >
      {search.data && <DomainResult report={search.data} />}
    </OneFieldSearch>
  );
}

function DomainResult({ report }: { report: DomainReport }) {
  return (
    <section aria-label={`What is known of ${report.domain}`}>
      <h3>{report.domain}</h3>
      <dl className="counts">
        <div>
          <dt>Sightings</dt>
          <dd>{report.total_sightings.toLocaleString()}</dd>
        </div>
        <div>
          <dt>Distinct credentials</dt>
          <dd>{report.distinct_credentials.toLocaleString()}</dd>
        </div>
        {report.by_leak_type.map((row) => (
          <div key={row.leak_type}>
            <dt>{leakType(row.leak_type)}</dt>
            <dd>
              {row.sightings.toLocaleString()} <small className="muted">in {plural(row.leaks, 'leak')}</small>
            </dd>
          </div>
        ))}
      </dl>
      {report.by_filter.some((row) => row.count > 0) && (
        <>
          <h4>By filter</h4>
          <ul className="chips">
            {report.by_filter
              .filter((row) => row.count > 0)
              .map((row) => (
                <li key={row.filter_id}>
                  {row.name.replaceAll('_', ' ')}: {row.count.toLocaleString()}
                </li>
              ))}
          </ul>
        </>
      )}
      <Sightings label={`Newest sightings of ${report.domain}`} sightings={report.newest} />
    </section>
  );
}

function EmailSearch() {
  const search = useEmailQuickSearch();
  return (
    <OneFieldSearch
      slug="email_quick_search"
      title="Email address"
      field="email"
      label="Email address"
      hint="One address; upper and lower case are the same."
      type="email"
      pending={search.isPending}
      error={search.error}
      onSearch={(email) => search.mutate(email)}
    >
      {search.data && <EmailResult report={search.data} />}
    </OneFieldSearch>
  );
}

function EmailResult({ report }: { report: EmailReport }) {
  if (report.total_sightings === 0) return <p role="status">{report.email} is in no leak Dragnet holds.</p>;
  return (
    <section aria-label={`Where ${report.email} was seen`}>
      <h3>
        {report.email}: {plural(report.total_sightings, 'sighting')}
      </h3>
      <Table label={`Leaks of ${report.email}`} headings={['Leak', 'Type', 'Sightings', 'First seen', 'Last seen']}>
        {report.leaks.map((leak) => (
          <tr key={leak.leak_name}>
            <td>{leak.leak_name}</td>
            <td>{leakType(leak.leak_type)}</td>
            <td>{leak.sightings.toLocaleString()}</td>
            <td>{formatDateTime(leak.first_seen)}</td>
            <td>{formatDateTime(leak.last_seen)}</td>
          </tr>
        ))}
      </Table>
      <h4>Sites it was used on</h4>
      <ul className="chips" aria-label={`Sites of ${report.email}`}>
        {report.sites.map((site) => (
          <li key={site.host}>
            {site.host} ({site.sightings.toLocaleString()})
          </li>
        ))}
      </ul>
      <Sightings label={`Newest sightings of ${report.email}`} sightings={report.newest} />
    </section>
  );
}

const leakType = (type: string) =>
  type === 'stealer_log' ? 'Stealer logs' : type === 'combolist' ? 'Combolists' : type;

function Sightings({ label, sightings }: { label: string; sightings: Sighting[] }) {
  if (sightings.length === 0) return <p>No sightings.</p>;
  return (
    <Table label={label} headings={['Login', 'Password', 'Site', 'Leak', 'Machine', 'Leaked', 'Discovered']}>
      {sightings.map((sighting, index) => (
        <tr key={`${sighting.login} ${sighting.url} ${sighting.discovered_at} ${index}`}>
          <td>{sighting.login}</td>
          <td>
            <code>{sighting.password}</code>
          </td>
          <td className="wrap">{sighting.url ?? sighting.host ?? '—'}</td>
          <td>
            {sighting.leak_name} <small className="muted">({leakType(sighting.leak_type)})</small>
          </td>
          <td>{[sighting.software, sighting.country].filter(Boolean).join(', ') || '—'}</td>
          <td>{sighting.leaked_at ? formatDateTime(sighting.leaked_at) : '—'}</td>
          <td>{formatDateTime(sighting.discovered_at)}</td>
        </tr>
      ))}
    </Table>
  );
}
