import { getRouteApi, Link, useNavigate } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { ApiError } from '../../api/errors.ts';
import { Field } from '../../ui/field.tsx';
import { formatDateTime, plural } from '../../ui/format.ts';
import { ErrorNotice, Loading } from '../../ui/notices.tsx';
import { Page } from '../../ui/page.tsx';
import { Pager } from '../../ui/pager.tsx';
import { useTimeZoneChoice } from '../../ui/time-zone.ts';
import type { PresentedHit } from '../incidents/hit-fields.ts';
import { HitBody, ruleTerms } from '../incidents/presenters/presenters.tsx';
import { argFieldNames, argsFromValues, serverArgErrors, valuesFromArgs, type ArgValues } from '../rules/args-form.ts';
import { ArgsFields } from '../rules/args-fields.tsx';
import { useCatalog, type CatalogService } from '../rules/catalog.ts';
import { datetimeInputMoment, datetimeInputValue } from '../rules/datetime-input.ts';
import { ruleFromSourceSearch } from '../rules/new-rule-search.ts';
import { ExportFormatButtons } from './export-buttons.tsx';
import { sourceSearchRequest, type SourceSearchRequest, type SourceSearchSearch } from './source-search.ts';
import {
  SOURCE_SEARCH_CAP,
  SOURCE_SEARCH_PAGE_SIZE,
  useSourceExport,
  useSourceSearch,
  SOURCE_EXPORT_FORMATS,
} from './source-search-queries.ts';

const route = getRouteApi('/app/search/sources');
const DAY_MS = 24 * 3_600_000;

/**
 * Search → Source search: any source with data, searched with its own args over a past window
 * (at most 31 days) by the rules' matcher (the rule preview), its hits drawn by its presenter and
 * exported. Nothing is stored; the address holds the search.
 */
export function SourceSearchPage() {
  const catalog = useCatalog();
  const search = route.useSearch();
  const request = sourceSearchRequest(search);
  const page = search.page ?? 1;
  const results = useSourceSearch(request, page);
  const sources = (catalog.data ?? []).filter((entry) => entry.has_data);
  // A shared address may name a source that has no data here yet: its (empty) answer still shows.
  const service = catalog.data?.find((entry) => entry.id === search.service);
  return (
    <Page title="Source search">
      <p className="muted">
        Searches one source's data over a past window (at most 31 days) exactly as a monitoring rule would, without
        storing anything or notifying anyone. Passwords stay masked.
      </p>
      <ErrorNotice error={catalog.error} title="The sources could not be read" />
      {catalog.data ? (
        // A new search in the address (a link, back, a shared search) starts the form from what it
        // names; turning its pages keeps what is being typed.
        <SearchForm key={JSON.stringify(request)} sources={sources} search={search} error={results.error} />
      ) : (
        catalog.isPending && <Loading />
      )}
      {results.isFetching && <Loading label="Searching…" />}
      {service && request && results.data && (
        <Results
          service={service}
          request={request}
          page={page}
          data={results.data}
          busy={results.isFetching}
          search={search}
        />
      )}
    </Page>
  );
}

function SearchForm(props: { sources: CatalogService[]; search: SourceSearchSearch; error: unknown }) {
  const { sources, search } = props;
  const zone = useTimeZoneChoice();
  const navigate = useNavigate();
  const [serviceId, setServiceId] = useState(search.service);
  const service = sources.find((entry) => entry.id === serviceId);
  const params = service?.args_schema.params ?? [];
  const [argValues, setArgValues] = useState<ArgValues>(() => valuesFromArgs(params, search.args));
  const [from, setFrom] = useState(() =>
    datetimeInputValue(search.from ? Date.parse(search.from) : Date.now() - 7 * DAY_MS, zone),
  );
  const [to, setTo] = useState(() => datetimeInputValue(search.to ? Date.parse(search.to) : Date.now(), zone));
  const [localErrors, setLocalErrors] = useState<Record<string, string>>({});

  const chooseService = (id: number | undefined) => {
    setServiceId(id);
    setArgValues(valuesFromArgs(sources.find((entry) => entry.id === id)?.args_schema.params ?? []));
    setLocalErrors({});
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const { args, errors } = argsFromValues(params, argValues);
    const window = { from: datetimeInputMoment(from, zone), to: datetimeInputMoment(to, zone) };
    const local: Record<string, string> = { ...errors };
    if (!service) local.service = 'choose a source';
    if (!window.from) local.from = 'is required';
    if (!window.to) local.to = 'is required';
    setLocalErrors(local);
    if (Object.keys(local).length || !service || !window.from || !window.to) return;
    void navigate({ to: '/search/sources', search: { service: service.id, args, from: window.from, to: window.to } });
  };

  // The server's errors name the search in the address: they show while that search is in the form.
  const apiError = props.error instanceof ApiError && serviceId === search.service ? props.error : undefined;
  const fieldError = (field: string) => localErrors[field] ?? apiError?.fieldMessage(field);
  const zoneName = zone === 'utc' ? 'UTC' : 'your time';
  return (
    <form onSubmit={submit} aria-label="Source search" noValidate className="card">
      <Field label="Source" hint="Sources with data on this server." error={fieldError('service')}>
        {(control) => (
          <select
            {...control}
            value={serviceId ?? ''}
            onChange={(event) => chooseService(event.target.value ? Number(event.target.value) : undefined)}
          >
            <option value="">Choose a source…</option>
            {sources.map((entry) => (
              <option key={entry.id} value={entry.id}>
                {entry.alias}
              </option>
            ))}
          </select>
        )}
      </Field>
      {service && (
        <ArgsFields
          service={service}
          legend="What to look for"
          values={argValues}
          errors={{ ...serverArgErrors(apiError, params), ...localErrors }}
          onChange={(param, value) => setArgValues((current) => ({ ...current, [param]: value }))}
        />
      )}
      <div className="filter-form">
        <Field label={`From (${zoneName})`} hint="Exclusive; at most 31 days before To." error={fieldError('from')}>
          {(control) => (
            <input {...control} type="datetime-local" value={from} onChange={(event) => setFrom(event.target.value)} />
          )}
        </Field>
        <Field label={`To (${zoneName})`} hint="Not in the future." error={fieldError('to')}>
          {(control) => (
            <input {...control} type="datetime-local" value={to} onChange={(event) => setTo(event.target.value)} />
          )}
        </Field>
      </div>
      <button type="submit" className="primary">
        Search
      </button>
      <ErrorNotice
        error={props.error instanceof ApiError ? apiError : props.error}
        title="No results"
        fieldsShown={['service', 'from', 'to', ...argFieldNames(apiError, params)]}
      />
    </form>
  );
}

function Results(props: {
  service: CatalogService;
  request: SourceSearchRequest;
  search: SourceSearchSearch;
  page: number;
  busy: boolean;
  data: { count: number; from: string; to: string; results: PresentedHit[] };
}) {
  const { service, request, data, page } = props;
  const terms = ruleTerms(request.args);
  const pages = Math.max(1, Math.ceil(Math.min(data.count, SOURCE_SEARCH_CAP) / SOURCE_SEARCH_PAGE_SIZE));
  return (
    <section aria-labelledby="source-results">
      <h2 id="source-results">
        {plural(data.count, 'hit')} in {service.alias}
      </h2>
      <p aria-live="polite" className="muted">
        Between {formatDateTime(data.from)} and {formatDateTime(data.to)}
        {pages > 1 ? `, page ${page} of ${pages}` : ''}.
        {data.count > SOURCE_SEARCH_CAP &&
          ` Only the newest ${SOURCE_SEARCH_CAP.toLocaleString()} can be shown and exported: narrow the window or the search.`}
      </p>
      <div className="actions">
        <Link to="/rules/new" search={ruleFromSourceSearch(service, request.args)}>
          Create a rule from this search
        </Link>
      </div>
      {data.count > 0 && <ExportButtons request={request} sourceName={service.name} />}
      <ol className="results" aria-busy={props.busy} aria-label="Hits">
        {data.results.map((hit, index) => (
          <li key={hit.hit_key}>
            <article aria-label={`Hit ${(page - 1) * SOURCE_SEARCH_PAGE_SIZE + index + 1}`}>
              <HitBody service={service.name} hit={hit} terms={terms} />
            </article>
          </li>
        ))}
      </ol>
      <Pager
        page={page}
        pages={pages}
        label="Hit pages"
        to={(target, text) => (
          <Link to="/search/sources" search={{ ...props.search, page: target }}>
            {text}
          </Link>
        )}
      />
    </section>
  );
}

function ExportButtons({ request, sourceName }: { request: SourceSearchRequest; sourceName: string }) {
  return (
    <ExportFormatButtons
      label="Export hits"
      note={`Export (up to ${SOURCE_SEARCH_CAP.toLocaleString()} hits)`}
      formats={SOURCE_EXPORT_FORMATS}
      download={useSourceExport(request, sourceName)}
    />
  );
}
