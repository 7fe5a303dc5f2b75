import { useId, useState } from 'react';
import { ErrorNotice, Loading } from '../../../ui/notices.tsx';
import type { PresentedHit } from '../hit-fields.ts';
import { useHitContext } from '../incident-queries.ts';
import { PostedText, When } from './parts.tsx';

/**
 * "Open in context": the posts before and after the hit in its channel or thread, read when
 * asked for (docs/api.md "Open in context"), the hit marked among them.
 */
export function OpenInContext(props: { hit: PresentedHit; terms: string[]; what: 'channel' | 'thread' }) {
  // A preview's hit is not stored: the server has no hit to read the conversation around.
  const hitId = props.hit.id;
  return typeof hitId === 'number' ? <ContextToggle hitId={hitId} terms={props.terms} what={props.what} /> : null;
}

function ContextToggle({ hitId, terms, what }: { hitId: number; terms: string[]; what: 'channel' | 'thread' }) {
  const [open, setOpen] = useState(false);
  const panelId = useId();
  return (
    <>
      <button type="button" aria-expanded={open} aria-controls={panelId} onClick={() => setOpen(!open)}>
        {open ? 'Hide context' : `Open in context (the ${what})`}
      </button>
      {open && (
        <div id={panelId} className="hit-context">
          <ContextPosts hitId={hitId} terms={terms} />
        </div>
      )}
    </>
  );
}

function ContextPosts({ hitId, terms }: { hitId: number; terms: string[] }) {
  const around = useHitContext(hitId);
  if (around.isPending) return <Loading label="Loading the conversation…" />;
  if (!around.data) return <ErrorNotice error={around.error} title="The conversation could not be read" />;
  return (
    <section aria-label={`Context in ${around.data.title}`}>
      <h3>{around.data.title}</h3>
      <ol className="context-posts">
        {around.data.posts.map((post) => (
          <li key={post.id} className={post.is_hit ? 'context-hit' : undefined} aria-current={post.is_hit || undefined}>
            <header>
              {post.author && <span>{post.author}</span>}
              <When iso={post.date} />
              {post.is_hit && <span className="badge">this hit</span>}
            </header>
            <PostedText value={post.text} terms={post.is_hit ? terms : []} label="Text" />
          </li>
        ))}
      </ol>
    </section>
  );
}
