import type { ReactNode } from 'react';
import { formatDateTime } from '../../../ui/format.ts';
import { ErrorNotice } from '../../../ui/notices.tsx';
import { isWebLink } from '../../../ui/web-link.ts';
import { highlight } from '../../search/highlight.ts';
import type { PresentedHit as Hit } from '../hit-fields.ts';
import { useRevealHit } from '../incident-queries.ts';

/** What every presenter is given: the hit, and the folded terms its rule looked for. */
export interface PresenterProps {
  hit: Hit;
  terms: string[];
}

/** A hit's field as text, or null when the source left it empty. */
export function text(hit: Hit, field: string): string | null {
  const value = hit[field];
  if (value === null || value === undefined || value === '') return null;
  return String(value);
}

/** A hit's list field (names, hosts), empty when absent. */
export function list(hit: Hit, field: string): string[] {
  const value = hit[field];
  return Array.isArray(value) ? value.map(String) : [];
}

/**
 * Labelled facts of a hit, in the order given; a fact without a value is left out, so a
 * presenter lists every field its source may give without showing empty ones.
 */
export function Facts({ facts }: { facts: [label: string, value: ReactNode][] }) {
  const shown = facts.filter(([, value]) => value !== null && value !== undefined && value !== '' && value !== false);
  if (!shown.length) return null;
  return (
    <dl className="hit-fields">
      {shown.map(([label, value]) => (
        <div key={label}>
          <dt>{label}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

/** A timestamp of a hit in the reader's time, machine-readable for assistive tools. */
export function When({ iso }: { iso: string | null }) {
  if (!iso) return null;
  return <time dateTime={iso}>{formatDateTime(iso)}</time>;
}

/** A hit's timestamp field as a fact, or null when absent. */
export function at(hit: Hit, field: string) {
  const iso = text(hit, field);
  return iso && <When iso={iso} />;
}

/** A hit's URL field as a fact (clickable when a web address), or null when absent. */
export function link(hit: Hit, field: string, label?: string) {
  const href = text(hit, field);
  return href && <WebLink href={href}>{label}</WebLink>;
}

/** A hit's field in a code font (keys, numbers, addresses), or null when absent. */
export function code(hit: Hit, field: string) {
  const value = text(hit, field);
  return value && <code>{value}</code>;
}

/** A link out of Dragnet: a new tab, no referrer (the address of an incident stays ours). */
export function WebLink({ href, children }: { href: string | null; children?: ReactNode }) {
  if (!href) return null;
  if (!isWebLink(href)) return <span>{children ?? href}</span>;
  return (
    <a href={href} target="_blank" rel="noopener noreferrer nofollow">
      {children ?? href}
    </a>
  );
}

const URL_IN_TEXT = /\bhttps?:\/\/[^\s<>"'`]+[^\s<>"'`.,;:!?)\]}]/giu;

/**
 * A text as posted: the rule's terms marked, web addresses clickable. Terms are marked inside
 * links too, so a match in a URL shows where it is.
 */
export function PostedText({ value, terms, label }: { value: string | null; terms: string[]; label: string }) {
  if (!value) return null;
  const parts: ReactNode[] = [];
  let cursor = 0;
  const marked = (piece: string, key: string) =>
    highlight(piece, terms).map((segment, index) =>
      segment.match ? <mark key={`${key}.${index}`}>{segment.text}</mark> : segment.text,
    );
  for (const found of value.matchAll(URL_IN_TEXT)) {
    const at = found.index;
    if (at > cursor) parts.push(...marked(value.slice(cursor, at), `t${at}`));
    parts.push(
      <a key={`a${at}`} href={found[0]} target="_blank" rel="noopener noreferrer nofollow">
        {marked(found[0], `a${at}`)}
      </a>,
    );
    cursor = at + found[0].length;
  }
  if (cursor < value.length) parts.push(...marked(value.slice(cursor), 'end'));
  return (
    <p className="text" aria-label={label}>
      {parts}
    </p>
  );
}

/**
 * A leaked password, masked; "Reveal" asks the server for it, which records who saw it in the
 * audit log (docs/api.md "Leaked passwords").
 */
export function RevealablePassword({ hit }: { hit: Hit }) {
  const masked = text(hit, 'password');
  if (!masked) return null;
  // A preview's hit is not stored: it stays masked, there is nothing to reveal it from.
  if (typeof hit.id !== 'number') return <code>{masked}</code>;
  return <Reveal hitId={hit.id} masked={masked} />;
}

function Reveal({ hitId, masked }: { hitId: number; masked: string }) {
  const reveal = useRevealHit(hitId);
  const clear = reveal.data?.fields.password;
  return (
    <span className="secret">
      <code>{typeof clear === 'string' ? clear : masked}</code>{' '}
      {clear === undefined && (
        <button
          type="button"
          className="link-button"
          disabled={reveal.isPending}
          onClick={() => reveal.mutate()}
          aria-label={`Reveal the password of hit ${hitId} (recorded in the audit log)`}
        >
          Reveal
        </button>
      )}
      <ErrorNotice error={reveal.error} title="The password was not revealed" />
    </span>
  );
}

/** Bytes as a person reads them: 1.5 MB. */
export function byteSize(bytes: unknown): string | null {
  if (typeof bytes !== 'number') return null;
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${value.toLocaleString(undefined, { maximumFractionDigits: unit ? 1 : 0 })} ${units[unit]}`;
}
