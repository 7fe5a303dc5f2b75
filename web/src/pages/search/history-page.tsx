import { getRouteApi, Link } from '@tanstack/react-router';
import type { HistoryItem } from '../../api/types.ts';
import { ErrorNotice, Loading } from '../../ui/notices.tsx';
import { formatDateTime, plural } from '../../ui/format.ts';
import { Page } from '../../ui/page.tsx';
import { Table } from '../../ui/table.tsx';
import type { SearchPageSearch } from './search-params.ts';
import { useDeleteSearch, useSearchHistory } from './search-queries.ts';

const route = getRouteApi('/app/search/history');

/** The search page's address that re-opens a recorded search with its query and options. */
export function reopen(item: HistoryItem): SearchPageSearch {
  return {
    q: item.query,
    ...(item.channel_ids?.length ? { channels: item.channel_ids } : {}),
    ...(item.unique_only ? { unique: true } : {}),
    context: item.context_chars,
    history: item.id,
  };
}

/** The organization's past searches, newest first; each re-opens as it ran, and its author may delete it. */
export function HistoryPage() {
  const { page = 1 } = route.useSearch();
  const history = useSearchHistory(page);
  const remove = useDeleteSearch();

  return (
    <Page title="Search history">
      {history.isPending && <Loading />}
      <ErrorNotice error={history.error} />
      <ErrorNotice error={remove.error} title="Not deleted" />
      {history.data && history.data.total === 0 && (
        <p>
          No searches yet. <Link to="/search">Run one</Link>.
        </p>
      )}
      {history.data && history.data.items.length > 0 && (
        <>
          <Table headings={['Query', 'Matches', 'Channels', 'Searched']} actions="Actions">
            {history.data.items.map((item) => (
              <tr key={item.id}>
                <td>
                  <code>{item.query}</code>
                  <div className="muted">
                    {[
                      item.channel_ids?.length ? plural(item.channel_ids.length, 'channel') : null,
                      item.unique_only ? 'unique only' : null,
                      `context ${item.context_chars}`,
                    ]
                      .filter(Boolean)
                      .join(' · ')}
                  </div>
                </td>
                <td>{item.total_matches.toLocaleString()}</td>
                <td>{item.channels_matched.toLocaleString()}</td>
                <td>
                  <time dateTime={item.searched_at}>{formatDateTime(item.searched_at)}</time>
                </td>
                <td>
                  <Link to="/search" search={reopen(item)} aria-label={`Open the search ${item.query}`}>
                    Open
                  </Link>
                  {item.mine && (
                    <button
                      type="button"
                      onClick={() => remove.mutate(item.id)}
                      disabled={remove.isPending}
                      aria-label={`Delete the search ${item.query}`}
                    >
                      Delete
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </Table>
          <nav aria-label="Pages" className="actions">
            {page > 1 && (
              <Link to="/search/history" search={page > 2 ? { page: page - 1 } : {}}>
                Newer
              </Link>
            )}
            <span className="muted">
              Page {history.data.page} of {Math.max(history.data.total_pages, 1)}
            </span>
            {page < history.data.total_pages && (
              <Link to="/search/history" search={{ page: page + 1 }}>
                Older
              </Link>
            )}
          </nav>
        </>
      )}
    </Page>
  );
}
