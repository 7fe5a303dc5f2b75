import { useInfiniteQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useEffect, useRef } from 'react';
import { useApi, useSession } from '../../api/api-context.tsx';
import type { SearchResult } from '../../api/types.ts';
import { formatDateTime, plural } from '../../ui/format.ts';
import { isWebLink } from '../../ui/web-link.ts';
import { ErrorNotice, Loading } from '../../ui/notices.tsx';
import { ruleFromSearch } from '../rules/new-rule-search.ts';
import { ExportButtons } from './export-buttons.tsx';
import { highlight, highlightTerms } from './highlight.ts';
import type { SearchPageSearch } from './search-params.ts';
import { searchResultsQuery } from './search-queries.ts';

/** The results of a recorded search (search-queries.ts), with exports and "load more". */
export function SearchResults({ historyId, options }: { historyId: number; options: SearchPageSearch }) {
  const api = useApi();
  const results = useInfiniteQuery(searchResultsQuery(api, useSession(), historyId));

  const list = useRef<HTMLOListElement>(null);
  const items = results.data?.pages.flatMap((page) => page.results) ?? [];
  // After "load more", keyboard and screen-reader users continue at the first new result.
  const focusFrom = useRef<number | null>(null);
  useEffect(() => {
    const from = focusFrom.current;
    if (from === null || items.length <= from) return;
    focusFrom.current = null;
    (list.current?.children[from] as HTMLElement | undefined)?.focus();
  }, [items.length]);
  const loadMore = () => {
    focusFrom.current = items.length;
    void results.fetchNextPage();
  };

  if (results.isPending) return <Loading label="Loading results…" />;
  // A failed "load more" keeps the results read so far and says why below them.
  if (!results.data) return <ErrorNotice error={results.error} />;

  const first = results.data.pages[0]!;
  const last = results.data.pages.at(-1)!;
  const terms = highlightTerms(first.query_info.parsed);
  return (
    <section aria-labelledby="results-heading">
      <div className="results-summary">
        <h2 id="results-heading" aria-live="polite">
          {plural(first.total, 'match', 'matches')} in {plural(first.channels_matched, 'channel')}
        </h2>
        <Link
          to="/rules/new"
          search={ruleFromSearch({
            query: first.query_info.query,
            follow_up_token: last.follow_up_token,
            channel_ids: options.channels ?? null,
            unique_only: options.unique ?? false,
            ...(options.context ? { context_chars: options.context } : {}),
          })}
          className="button"
        >
          Create a rule from this search
        </Link>
      </div>
      {first.warning && <p className="notice warning">{first.warning}</p>}
      {first.total > 0 && <ExportButtons historyId={historyId} />}
      <ol className="results" ref={list}>
        {items.map((item) => (
          <li key={`${item.channel_id}:${item.message_id}`} className="result" tabIndex={-1}>
            <Result item={item} terms={terms} />
          </li>
        ))}
      </ol>
      {results.hasNextPage && (
        <div className="actions">
          <button type="button" onClick={loadMore} disabled={results.isFetchingNextPage}>
            {results.isFetchingNextPage ? 'Loading…' : 'Load more'}
          </button>
          <span className="muted">
            {items.length.toLocaleString()} of {first.total.toLocaleString()} shown
          </span>
        </div>
      )}
      <ErrorNotice error={results.isFetchNextPageError ? results.error : null} />
    </section>
  );
}

function Result({ item, terms }: { item: SearchResult; terms: string[] }) {
  const channel = item.channel_username
    ? `@${item.channel_username}`
    : (item.channels_list?.[0] ?? `channel ${item.channel_id}`);
  return (
    <article>
      <header>
        <span>{channel}</span>
        <time dateTime={item.date}>{formatDateTime(item.date)}</time>
        {(item.forwarded_from ?? item.forwarded_from_id) && (
          <span>forwarded from {item.forwarded_from ?? item.forwarded_from_id}</span>
        )}
        {item.via_bot && <span>via {item.via_bot}</span>}
        {item.edited_at && <span title={formatDateTime(item.edited_at)}>edited</span>}
        {item.has_media && <span>{[item.media_type ?? 'attachment', item.file_name].filter(Boolean).join(': ')}</span>}
        {item.channel_count > 1 && (
          <span title={item.channels_list?.join(', ')}>
            in {item.channel_count} channels{item.channels_list ? `: ${item.channels_list.join(', ')}` : ''}
          </span>
        )}
      </header>
      <p className="text">
        {highlight(item.text_preview, terms).map((segment, index) =>
          segment.match ? <mark key={index}>{segment.text}</mark> : segment.text,
        )}
      </p>
      {item.links && item.links.length > 0 && (
        <ul className="links" aria-label="Links in the message">
          {item.links.map((link) => (
            <li key={link}>
              {isWebLink(link) ? (
                <a href={link} target="_blank" rel="noopener noreferrer nofollow">
                  {link}
                </a>
              ) : (
                link
              )}
            </li>
          ))}
        </ul>
      )}
    </article>
  );
}
