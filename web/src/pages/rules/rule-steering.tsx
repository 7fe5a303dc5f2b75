import { Link } from '@tanstack/react-router';
import { useId, useState, type FormEvent } from 'react';
import { formatDateTime, plural } from '../../ui/format.ts';
import { ErrorNotice, Loading } from '../../ui/notices.tsx';
import { Pager } from '../../ui/pager.tsx';
import { hitFields } from '../incidents/hit-fields.ts';
import { humanize } from './args-fields.tsx';
import { datetimeLocalValue } from './datetime-input.ts';
import type { Rule } from './rule-queries.ts';
import {
  PREVIEW_PAGE_SIZE,
  usePauseState,
  useRulePreview,
  useRunNow,
  useSetPaused,
  type PreviewResult,
} from './steering-queries.ts';

/** The rule's state for the scheduler, and the button that flips it. */
export function PauseControl({ rule }: { rule: Rule }) {
  const state = usePauseState(rule.id);
  const change = useSetPaused(rule.id);
  if (!state.data) return <ErrorNotice error={state.error} />;
  const paused = state.data.is_paused;
  return (
    <div className="steer-control">
      <p role="status">
        {paused ? (
          <>
            <span className="badge">paused</span> since {formatDateTime(state.data.paused_at)}: the scheduler does not
            run it. Resumed, its next run covers everything since its last run.
          </>
        ) : (
          <>
            <span className="ok">Active</span>: the scheduler runs it at its frequency.
          </>
        )}
      </p>
      <button
        type="button"
        onClick={() => change.mutate(!paused)}
        disabled={change.isPending}
        aria-label={`${paused ? 'Resume' : 'Pause'} ${rule.name}`}
      >
        {paused ? 'Resume' : 'Pause'}
      </button>
      <ErrorNotice error={change.error} title={paused ? 'Not resumed' : 'Not paused'} />
    </div>
  );
}

/** "Run now": the window since the last run, as a scheduled run; its match opens the incident. */
export function RunNowControl({ rule }: { rule: Rule }) {
  const run = useRunNow(rule.id);
  const result = run.data;
  return (
    <div className="steer-control">
      <button type="button" onClick={() => run.mutate()} disabled={run.isPending}>
        {run.isPending ? 'Running…' : 'Run now'}
      </button>
      <ErrorNotice error={run.error} title="The rule did not run" />
      {result && (
        <p role="status" className="notice success">
          {!result.ran ? (
            'Another worker is running this window; its result shows in the run history.'
          ) : result.match ? (
            <>
              {result.match.status === 'pending'
                ? 'The run is scanning in the background. '
                : `Found ${plural(result.match.new_hits, 'new hit')}. `}
              <Link to="/incidents/$matchId" params={{ matchId: result.match.id }}>
                Open the incident
              </Link>
            </>
          ) : (
            `Nothing new since ${result.window_start ? formatDateTime(result.window_start) : 'the start'}.`
          )}
        </p>
      )}
    </div>
  );
}

const DAY_MS = 24 * 3_600_000;
/** What the rule would have found in a past window (up to 31 days); nothing is stored or sent. */
export function RulePreview({ rule }: { rule: Rule }) {
  const ids = { from: useId(), to: useId() };
  const [from, setFrom] = useState(() => datetimeLocalValue(Date.now() - 7 * DAY_MS));
  const [to, setTo] = useState(() => datetimeLocalValue(Date.now()));
  const [previewWindow, setPreviewWindow] = useState<{ from: string; to: string } | null>(null);
  const [page, setPage] = useState(1);
  const preview = useRulePreview(rule.id, previewWindow, page);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setPage(1);
    setPreviewWindow({ from: new Date(from).toISOString(), to: new Date(to).toISOString() });
  };
  const pages = preview.data ? Math.max(1, Math.ceil(Math.min(preview.data.count, 10_000) / PREVIEW_PAGE_SIZE)) : 1;
  return (
    <>
      <p className="muted">
        Runs the rule's search over a past window (at most 31 days) and shows what it finds, excluded hits marked. No
        match is stored and nobody is notified.
      </p>
      <form className="filter-form" onSubmit={submit} aria-label="Preview window">
        <div className="field">
          <label htmlFor={ids.from}>From</label>
          <input id={ids.from} type="datetime-local" value={from} onChange={(event) => setFrom(event.target.value)} />
        </div>
        <div className="field">
          <label htmlFor={ids.to}>To</label>
          <input id={ids.to} type="datetime-local" value={to} onChange={(event) => setTo(event.target.value)} />
        </div>
        <button type="submit" disabled={!from || !to || preview.isFetching}>
          Preview
        </button>
      </form>
      {preview.isFetching && <Loading label="Searching the window…" />}
      <ErrorNotice error={preview.error} title="No preview" />
      {preview.data && <PreviewHits result={preview.data} />}
      {preview.data && (
        <Pager
          page={page}
          pages={pages}
          label="Preview pages"
          to={(target, text) => (
            <button type="button" onClick={() => setPage(target)}>
              {text}
            </button>
          )}
        />
      )}
    </>
  );
}

function PreviewHits({ result }: { result: PreviewResult }) {
  return (
    <>
      <p aria-live="polite" className="muted">
        {plural(result.count, 'hit')} between {formatDateTime(result.from)} and {formatDateTime(result.to)}
      </p>
      <ol className="results" aria-label="Preview hits">
        {result.results.map((hit) => (
          <li key={hit.hit_key} className={hit.is_excluded ? 'result excluded' : 'result'}>
            {hit.is_excluded && <span className="badge">excluded</span>}
            <dl className="hit-fields">
              {hitFields(hit).map((field) => (
                <div key={field.name}>
                  <dt>{humanize(field.name)}</dt>
                  <dd className={field.block ? 'text' : undefined}>{field.text}</dd>
                </div>
              ))}
            </dl>
          </li>
        ))}
      </ol>
    </>
  );
}
