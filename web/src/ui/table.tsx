import type { ReactNode } from 'react';

/**
 * A data table that scrolls sideways on a narrow screen: column headings, and a last column of
 * row actions whose heading only screen readers hear, and a `label` when the page has several.
 * Rows (`<tr>`) are the children.
 */
export function Table({
  headings,
  actions,
  label,
  children,
}: {
  headings: string[];
  actions?: string;
  label?: string;
  children: ReactNode;
}) {
  return (
    <div className="table-scroll">
      <table aria-label={label}>
        <thead>
          <tr>
            {headings.map((heading) => (
              <th key={heading} scope="col">
                {heading}
              </th>
            ))}
            {actions && (
              <th scope="col">
                <span className="visually-hidden">{actions}</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
