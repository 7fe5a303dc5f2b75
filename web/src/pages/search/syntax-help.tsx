/** The query language in brief (docs/api.md "Query language"). */
export function SyntaxHelp({ id }: { id: string }) {
  return (
    <details id={id}>
      <summary>Query syntax</summary>
      <div className="table-scroll">
        <table>
          <caption className="visually-hidden">Query syntax</caption>
          <thead>
            <tr>
              <th scope="col">Write</th>
              <th scope="col">Finds messages</th>
            </tr>
          </thead>
          <tbody>
            <tr>
              <td>
                <code>acme.com</code>
              </td>
              <td>containing the term anywhere, any case (also login.acme.com, user@acme.com)</td>
            </tr>
            <tr>
              <td>
                <code>"fresh logs"</code>
              </td>
              <td>containing the exact phrase</td>
            </tr>
            <tr>
              <td>
                <code>a b</code> or <code>a AND b</code>
              </td>
              <td>containing both</td>
            </tr>
            <tr>
              <td>
                <code>a OR b</code>
              </td>
              <td>containing either</td>
            </tr>
            <tr>
              <td>
                <code>NOT a</code> or <code>-a</code>
              </td>
              <td>not containing it</td>
            </tr>
            <tr>
              <td>
                <code>( … )</code>
              </td>
              <td>grouping</td>
            </tr>
          </tbody>
        </table>
      </div>
      <p className="muted">
        Operators are upper-case. <code>OR</code> binds loosest, then <code>AND</code>, then <code>NOT</code>:{' '}
        <code>a OR b c</code> means <code>a OR (b AND c)</code>. Terms shorter than 3 characters match almost everywhere
        and are slow.
      </p>
    </details>
  );
}
