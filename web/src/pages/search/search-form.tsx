import { useNavigate } from '@tanstack/react-router';
import { useId, useState, type FormEvent } from 'react';
import { ApiError } from '../../api/errors.ts';
import { Field } from '../../ui/field.tsx';
import { ErrorNotice } from '../../ui/notices.tsx';
import { ChannelFilter } from './channel-filter.tsx';
import { useRunSearch } from './search-queries.ts';
import type { SearchPageSearch } from './search-params.ts';
import { SyntaxHelp } from './syntax-help.tsx';

/** context_chars bounds (docs/api.md "Search request and response"). */
const CONTEXT = { min: 10, max: 5000, default: 500 };

/**
 * Runs a search (POST messenger-search-create), seeds the results cache with its first page and
 * puts the recorded search in the address, so a reload re-reads it instead of searching again.
 */
export function SearchForm({ initial }: { initial: SearchPageSearch }) {
  const navigate = useNavigate();
  const syntaxId = useId();
  const [query, setQuery] = useState(initial.q ?? '');
  const [channels, setChannels] = useState(initial.channels ?? []);
  const [unique, setUnique] = useState(initial.unique ?? false);
  const [context, setContext] = useState(initial.context ? String(initial.context) : '');
  const [filtersOpen, setFiltersOpen] = useState(channels.length > 0 || unique || Boolean(context));

  const search = useRunSearch((response, body) => {
    void navigate({
      to: '/search',
      search: {
        q: body.query,
        ...(body.channel_ids ? { channels: body.channel_ids } : {}),
        ...(body.unique_only ? { unique: true } : {}),
        ...(body.context_chars ? { context: body.context_chars } : {}),
        history: response.search_history_id,
      },
    });
  });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const contextChars = context.trim() ? Number(context) : undefined;
    search.mutate({
      query,
      channel_ids: channels.length ? channels : null,
      unique_only: unique,
      ...(contextChars !== undefined ? { context_chars: contextChars } : {}),
    });
  };

  const error = search.error instanceof ApiError ? search.error : undefined;
  const queryError = error?.fieldMessage('query');
  return (
    <form onSubmit={submit} aria-label="Search messages" noValidate>
      <ErrorNotice error={search.error} fieldsShown={['query', 'context_chars', 'channel_ids']} />
      <Field
        label="Query"
        hint={<>Terms, &quot;phrases&quot;, AND, OR, NOT, -term and ( ). See the query syntax below.</>}
        error={queryError}
      >
        {(props) => (
          <div className="search-query">
            <textarea
              {...props}
              rows={2}
              required
              value={query}
              onChange={(event) => setQuery(event.target.value)}
              onKeyDown={(event) => {
                // Enter searches; Shift+Enter adds a line.
                if (event.key === 'Enter' && !event.shiftKey) {
                  event.preventDefault();
                  event.currentTarget.form?.requestSubmit();
                }
              }}
              placeholder={'"fresh logs" AND (acme-bank.com OR acmebank.net)'}
            />
            <button type="submit" className="primary" disabled={search.isPending || !query.trim()}>
              {search.isPending ? 'Searching…' : 'Search'}
            </button>
          </div>
        )}
      </Field>
      <SyntaxHelp id={syntaxId} />
      <details open={filtersOpen} onToggle={(event) => setFiltersOpen(event.currentTarget.open)}>
        <summary>Filters and options</summary>
        {/* Mounted when opened: its channel lists are not asked for on every search page load. */}
        {filtersOpen && <ChannelFilter selected={channels} onChange={setChannels} />}
        <Field
          label="Context characters"
          hint={`Text shown around each match, ${CONTEXT.min} to ${CONTEXT.max} (default ${CONTEXT.default}).`}
          error={error?.fieldMessage('context_chars')}
        >
          {(props) => (
            <input
              {...props}
              type="number"
              inputMode="numeric"
              min={CONTEXT.min}
              max={CONTEXT.max}
              placeholder={String(CONTEXT.default)}
              value={context}
              onChange={(event) => setContext(event.target.value)}
            />
          )}
        </Field>
        <label className="check">
          <input type="checkbox" checked={unique} onChange={(event) => setUnique(event.target.checked)} />
          Unique messages only (a text posted in several channels is one result)
        </label>
      </details>
    </form>
  );
}
