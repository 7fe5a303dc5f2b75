import { useEffect, type ReactNode } from 'react';

/** A page's heading and the document title, which screen readers announce on navigation. */
export function Page({ title, children, actions }: { title: string; children: ReactNode; actions?: ReactNode }) {
  useEffect(() => {
    document.title = `${title} · Dragnet`;
  }, [title]);
  return (
    <>
      <div className="results-summary">
        <h1>{title}</h1>
        {actions}
      </div>
      {children}
    </>
  );
}
