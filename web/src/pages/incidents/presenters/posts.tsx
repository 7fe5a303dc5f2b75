import type { ReactNode } from 'react';
import { foldText } from '../../../../../src/modules/sources/common/query/query-language.ts';
import { at, byteSize, Facts, list, PostedText, text, When, WebLink, type PresenterProps } from './parts.tsx';
import { OpenInContext } from './context.tsx';

/** A post of any kind: where, who and when above its text, its links and the way to its context. */
function Post(props: {
  where: ReactNode;
  author: string | null;
  when: string | null;
  notes?: (string | null | false)[];
  body: string | null;
  terms: string[];
  links?: string[];
  children?: ReactNode;
}) {
  return (
    <>
      <header>
        <span>{props.where}</span>
        {props.author && <span>by {props.author}</span>}
        <When iso={props.when} />
        {props.notes?.filter(Boolean).map((note) => (
          <span key={note as string}>{note}</span>
        ))}
      </header>
      <PostedText value={props.body} terms={props.terms} label="Text" />
      {props.links && props.links.length > 0 && (
        <ul className="links" aria-label="Links in the post">
          {props.links.map((link) => (
            <li key={link}>
              <WebLink href={link} />
            </li>
          ))}
        </ul>
      )}
      {props.children}
    </>
  );
}

export function MessengerHit({ hit, terms }: PresenterProps) {
  const channel = text(hit, 'channel_username');
  const media = hit.has_media ? [text(hit, 'media_type') ?? 'attachment', text(hit, 'file_name')] : [];
  return (
    <Post
      where={channel ? `@${channel}` : `channel ${text(hit, 'channel_id')}`}
      author={text(hit, 'user_id') && `user ${text(hit, 'user_id')}`}
      when={text(hit, 'date')}
      notes={[
        text(hit, 'forwarded_from') && `forwarded from ${text(hit, 'forwarded_from')}`,
        text(hit, 'via_bot') && `via ${text(hit, 'via_bot')}`,
        text(hit, 'edited_at') !== null && 'edited',
        media.length > 0 && media.filter(Boolean).join(': '),
      ]}
      body={text(hit, 'text') ?? text(hit, 'text_preview')}
      terms={terms}
      links={list(hit, 'links')}
    >
      <div className="actions">
        {channel && <WebLink href={`https://t.me/${channel}/${text(hit, 'message_id')}`}>Open in Telegram</WebLink>}
        <OpenInContext hit={hit} terms={terms} what="channel" />
      </div>
    </Post>
  );
}

export function ChatServerHit({ hit, terms }: PresenterProps) {
  const category = text(hit, 'category');
  return (
    <Post
      where={`${text(hit, 'server_name') ?? text(hit, 'server_id')} › ${category ? `${category} › ` : ''}#${text(hit, 'channel_name') ?? text(hit, 'channel_id')}`}
      author={text(hit, 'author_name') ?? text(hit, 'author_id')}
      when={text(hit, 'timestamp')}
      notes={[
        hit.is_bot === true && 'bot',
        list(hit, 'attachments').length > 0 && `attachments: ${list(hit, 'attachments').join(', ')}`,
      ]}
      body={text(hit, 'content')}
      terms={terms}
    >
      <div className="actions">
        <WebLink href={text(hit, 'url')}>Open in Discord</WebLink>
        <OpenInContext hit={hit} terms={terms} what="channel" />
      </div>
    </Post>
  );
}

export function ForumHit({ hit, terms }: PresenterProps) {
  const section = text(hit, 'section');
  return (
    <Post
      where={`${text(hit, 'forum')}${section ? ` › ${section}` : ''} › ${text(hit, 'thread_title') ?? `thread ${text(hit, 'thread_id')}`}`}
      author={text(hit, 'author')}
      when={text(hit, 'posted_at')}
      notes={[text(hit, 'title'), text(hit, 'content_type'), text(hit, 'language')]}
      body={text(hit, 'content')}
      terms={terms}
    >
      <div className="actions">
        <WebLink href={text(hit, 'url')}>Open the post</WebLink>
        <OpenInContext hit={hit} terms={terms} what="thread" />
      </div>
    </Post>
  );
}

export function PasteHit({ hit, terms }: PresenterProps) {
  return (
    <Post
      where={`${text(hit, 'site')}: ${text(hit, 'title') ?? 'untitled paste'}`}
      author={text(hit, 'user') ?? 'anonymous'}
      when={text(hit, 'posted_at')}
      notes={[text(hit, 'syntax'), byteSize(hit.size), text(hit, 'expire') && `expires ${text(hit, 'expire')}`]}
      body={text(hit, 'snippet')}
      terms={terms}
    >
      <div className="actions">
        <WebLink href={text(hit, 'url')}>Open the paste</WebLink>
      </div>
    </Post>
  );
}

export function RawLeakHit({ hit, terms }: PresenterProps) {
  const matched = text(hit, 'matched_term');
  return (
    <>
      <Facts
        facts={[
          ['Leak', text(hit, 'leak_name')],
          ['File type', text(hit, 'file_type')],
          ['Line', text(hit, 'line_number')],
          ['Matched', matched && `${matched} (${text(hit, 'term_type')})`],
          ['Indexed', at(hit, 'indexed_at')],
        ]}
      />
      <PostedText value={text(hit, 'line')} terms={matched ? [...terms, foldText(matched)] : terms} label="Line" />
    </>
  );
}
