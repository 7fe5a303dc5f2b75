import { getRouteApi } from '@tanstack/react-router';
import { Page } from '../../ui/page.tsx';
import { SearchForm } from './search-form.tsx';
import { SearchResults } from './search-results.tsx';

const route = getRouteApi('/app/search');

/** Messenger search (spec 4.2): the form, and the results of the search in the address. */
export function SearchPage() {
  const search = route.useSearch();
  return (
    <Page title="Search">
      {/* A new address (another search, one re-opened from history) starts the form from it. */}
      <SearchForm key={search.history ?? 'new'} initial={search} />
      {search.history ? (
        <SearchResults historyId={search.history} options={search} />
      ) : (
        <p className="muted">Search the messages of every tracked channel. Past searches are under History.</p>
      )}
    </Page>
  );
}
