import type { ReactNode } from 'react';

/**
 * "Previous · Page 2 of 5 · Next" under a paged list; `to` draws the control that shows a page
 * (a Link when the page is in the address, a button when it is the component's own state).
 */
export function Pager(props: {
  page: number;
  pages: number;
  label?: string;
  previous?: string;
  next?: string;
  to: (page: number, text: string) => ReactNode;
}) {
  const { page, pages } = props;
  if (pages <= 1) return null;
  return (
    <nav aria-label={props.label ?? 'Pages'} className="actions">
      {page > 1 && props.to(page - 1, props.previous ?? 'Previous')}
      <span className="muted">
        Page {page} of {pages}
      </span>
      {page < pages && props.to(page + 1, props.next ?? 'Next')}
    </nav>
  );
}
