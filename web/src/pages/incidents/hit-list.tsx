import { getRouteApi, Link, useNavigate } from '@tanstack/react-router';
import { useId, useState, type FormEvent } from 'react';
import { ApiError } from '../../api/errors.ts';
import { plural } from '../../ui/format.ts';
import { ErrorNotice, Loading } from '../../ui/notices.tsx';
import { Pager } from '../../ui/pager.tsx';
import { humanize } from '../rules/args-fields.tsx';
import type { CatalogService } from '../rules/catalog.ts';
import {
  useCreateExclusion,
  useDeleteExclusion,
  useExclusions,
  type Exclusion,
  type Match,
} from '../rules/rule-queries.ts';
import { describeExclusion } from './exclusion-list.tsx';
import { excludes, fieldText, HIT_KEY, type Hit } from './hit-fields.ts';
import { HITS_PAGE_SIZE, useMatchHits } from './incident-queries.ts';
import { HitBody } from './presenters/presenters.tsx';
import type { IncidentSearch } from './incident-search.ts';

const route = getRouteApi('/app/incidents/$matchId');

/** The sort choices of a service: newest or oldest first, then each sortable field both ways. */
export function sortOptions(service: Pick<CatalogService, 'sortable_fields'>) {
  const options = [
    { value: '', label: 'Newest first' },
    { value: 'date', label: 'Oldest first' },
  ];
  for (const field of service.sortable_fields.filter((name) => name !== 'date')) {
    options.push(
      { value: field, label: `${humanize(field)}, ascending` },
      { value: `-${field}`, label: `${humanize(field)}, descending` },
    );
  }
  return options;
}

/** A match's hits, paged, filtered and sorted by the service's fields, each excludable. */
export function HitList({
  match,
  service,
  ruleDeleted,
  terms,
}: {
  match: Match;
  service: CatalogService;
  ruleDeleted: boolean;
  /** The folded terms the rule looks for, marked in the hits. */
  terms: string[];
}) {
  const search = route.useSearch();
  const navigate = useNavigate();
  const page = search.page ?? 1;
  const sortId = useId();
  const hits = useMatchHits(match, search);
  const exclusions = useExclusions(ruleDeleted ? undefined : match.rule_id);
  const [done, setDone] = useState<string | null>(null);
  const exclude = useCreateExclusion(match.rule_id, (created) =>
    setDone(`Excluded ${describeExclusion(created)}. The counts are updated.`),
  );
  const include = useDeleteExclusion((exclusion) => setDone(`${describeExclusion(exclusion)} counts again.`));

  const show = (changes: Partial<IncidentSearch>) => {
    const next: IncidentSearch = { ...search, ...changes };
    if (!('page' in changes)) delete next.page;
    for (const key of Object.keys(next) as (keyof IncidentSearch)[]) if (next[key] === undefined) delete next[key];
    void navigate({ to: '/incidents/$matchId', params: { matchId: match.id }, search: next });
  };
  const pages = hits.data ? Math.max(1, Math.ceil(hits.data.count / HITS_PAGE_SIZE)) : 1;
  const filterError =
    hits.error instanceof ApiError ? (hits.error.fieldMessage('filter') ?? hits.error.fieldMessage('sort')) : undefined;

  return (
    <section aria-labelledby="hits-heading">
      <h2 id="hits-heading">Hits</h2>
      <div className="card hit-controls">
        <div className="field">
          <label htmlFor={sortId}>Sort</label>
          <select
            id={sortId}
            value={search.sort ?? ''}
            onChange={(event) => show({ sort: event.target.value || undefined })}
          >
            {sortOptions(service).map((option) => (
              <option key={option.value} value={option.value}>
                {option.label}
              </option>
            ))}
          </select>
        </div>
        <FilterForm
          fields={service.filterable_fields}
          onAdd={(filter) => show({ filter: [...(search.filter ?? []), filter] })}
        />
        <label className="check">
          <input
            type="checkbox"
            checked={!search.hide_excluded}
            onChange={(event) => show({ hide_excluded: event.target.checked ? undefined : true })}
          />
          Show excluded hits
        </label>
        {search.filter && (
          <ul className="chips" aria-label="Filters">
            {search.filter.map((filter, index) => (
              <li key={filter}>
                <button
                  type="button"
                  aria-label={`Remove the filter ${filter}`}
                  onClick={() => show({ filter: search.filter!.filter((_entry, at) => at !== index) })}
                >
                  {filter} ×
                </button>
              </li>
            ))}
          </ul>
        )}
      </div>
      <ErrorNotice error={exclude.error ?? include.error} title="The exclusion did not change" />
      {done && (
        <p role="status" className="notice success">
          {done}
        </p>
      )}
      {hits.isPending && <Loading label="Loading hits…" />}
      <ErrorNotice error={filterError ? null : hits.error} />
      {filterError && <p className="notice error">{filterError}</p>}
      {hits.data && (
        <>
          <p aria-live="polite" className="muted">
            {plural(hits.data.count, 'hit')}
            {search.filter || search.hide_excluded ? ' shown with these settings' : ''}
            {pages > 1 ? `, page ${page} of ${pages}` : ''}
          </p>
          <ol className="results" aria-busy={hits.isFetching}>
            {(hits.data.results as Hit[]).map((hit) => (
              <li key={hit.id} className={hit.is_excluded ? 'result excluded' : 'result'}>
                <HitCard
                  hit={hit}
                  service={service.name}
                  terms={terms}
                  excludable={ruleDeleted ? [] : service.excludable_fields}
                  exclusions={(exclusions.data ?? []).filter((exclusion) => excludes(exclusion, hit))}
                  busy={exclude.isPending || include.isPending}
                  onExclude={(exclusion) => exclude.mutate(exclusion)}
                  onInclude={(exclusion) => include.mutate(exclusion)}
                />
              </li>
            ))}
          </ol>
          <Pager
            page={page}
            pages={pages}
            label="Hit pages"
            to={(target, text) => (
              <Link to="/incidents/$matchId" params={{ matchId: match.id }} search={{ ...search, page: target }}>
                {text}
              </Link>
            )}
          />
        </>
      )}
    </section>
  );
}

function FilterForm({ fields, onAdd }: { fields: string[]; onAdd: (filter: string) => void }) {
  const ids = { field: useId(), value: useId() };
  const [field, setField] = useState(fields[0] ?? '');
  const [value, setValue] = useState('');
  if (!fields.length) return null;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!value.trim()) return;
    onAdd(`${field}:${value.trim()}`);
    setValue('');
  };
  return (
    <form className="filter-form" onSubmit={submit} aria-label="Add a filter">
      <div className="field">
        <label htmlFor={ids.field}>Filter on</label>
        <select id={ids.field} value={field} onChange={(event) => setField(event.target.value)}>
          {fields.map((name) => (
            <option key={name} value={name}>
              {humanize(name)}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor={ids.value}>equal to</label>
        <input
          id={ids.value}
          type="text"
          value={value}
          onChange={(event) => setValue(event.target.value)}
          placeholder="any case"
        />
      </div>
      <button type="submit" disabled={!value.trim()}>
        Add filter
      </button>
    </form>
  );
}

function HitCard(props: {
  hit: Hit;
  service: string;
  terms: string[];
  excludable: string[];
  exclusions: Exclusion[];
  busy: boolean;
  onExclude: (exclusion: { field: string; value: string }) => void;
  onInclude: (exclusion: Exclusion) => void;
}) {
  const { hit } = props;
  const byValue = props.excludable.filter(
    (field) => hit[field] !== null && hit[field] !== undefined && hit[field] !== '',
  );
  const headingId = useId();
  return (
    <article aria-labelledby={headingId}>
      <header>
        <span id={headingId} className="visually-hidden">
          Hit {hit.id}
        </span>
        {hit.is_excluded && <span className="badge">excluded</span>}
      </header>
      <HitBody service={props.service} hit={hit} terms={props.terms} />
      {props.excludable.length > 0 && (
        <div className="actions">
          {hit.is_excluded ? (
            props.exclusions.map((exclusion) => (
              <button key={exclusion.id} type="button" disabled={props.busy} onClick={() => props.onInclude(exclusion)}>
                Count again ({describeExclusion(exclusion)})
              </button>
            ))
          ) : (
            <>
              <button
                type="button"
                disabled={props.busy}
                onClick={() => props.onExclude({ field: HIT_KEY, value: hit.hit_key })}
                aria-describedby={headingId}
              >
                False positive: exclude this hit
              </button>
              {byValue.length > 0 && (
                <details>
                  <summary>Exclude every hit with…</summary>
                  <ul className="chips">
                    {byValue.map((field) => (
                      <li key={field}>
                        <button
                          type="button"
                          disabled={props.busy}
                          onClick={() => props.onExclude({ field, value: String(hit[field]) })}
                        >
                          {humanize(field)} {fieldText(hit[field])}
                        </button>
                      </li>
                    ))}
                  </ul>
                </details>
              )}
            </>
          )}
        </div>
      )}
    </article>
  );
}
