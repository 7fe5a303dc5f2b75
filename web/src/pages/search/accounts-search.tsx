import { useState, type ChangeEvent, type FormEvent } from 'react';
import { ApiError } from '../../api/errors.ts';
import { Field } from '../../ui/field.tsx';
import { formatDateTime, plural } from '../../ui/format.ts';
import { Pager } from '../../ui/pager.tsx';
import { Table } from '../../ui/table.tsx';
import { ACCOUNTS_PAGE_SIZE, sha1Prefix, useAccountsSearch, type AccountsQuery } from './quick-queries.ts';
import { QuotaLeft, SearchError } from './quick-search-status.tsx';

const FIELDS = ['login', 'domain', 'url', 'password_sha1_prefix'] as const;
type FieldName = (typeof FIELDS)[number];

/**
 * The accounts database search: distinct credentials matching every field given, paged. The
 * password range can be typed as the 5-hex prefix, or as a password whose SHA-1 prefix the
 * browser computes, so the password itself is never sent.
 */
export function AccountsSearch() {
  const search = useAccountsSearch();
  const [values, setValues] = useState<Record<FieldName, string>>({
    login: '',
    domain: '',
    url: '',
    password_sha1_prefix: '',
  });
  const [password, setPassword] = useState('');
  const [asked, setAsked] = useState<Omit<AccountsQuery, 'page'>>({});

  const set = (name: FieldName) => (event: ChangeEvent<HTMLInputElement>) =>
    setValues((current) => ({ ...current, [name]: event.target.value }));

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const prefix = password ? await sha1Prefix(password) : values.password_sha1_prefix.trim();
    if (password) setValues((current) => ({ ...current, password_sha1_prefix: prefix }));
    const query = Object.fromEntries(
      FIELDS.map((name) => [name, name === 'password_sha1_prefix' ? prefix : values[name].trim()]).filter(
        ([, value]) => value,
      ),
    ) as Omit<AccountsQuery, 'page'>;
    setAsked(query);
    search.mutate({ ...query, page: 1 });
  };

  const error = (field: string) => (search.error instanceof ApiError ? search.error.fieldMessage(field) : undefined);
  const input = (name: FieldName, label: string, hint: string) => (
    <Field label={label} hint={hint} error={error(name)}>
      {(control) => <input {...control} value={values[name]} onChange={set(name)} />}
    </Field>
  );
  const page = search.variables?.page ?? 1;
  return (
    <section className="card" aria-labelledby="accounts-search">
      <h2 id="accounts-search">Accounts database</h2>
      <QuotaLeft slug="accounts_database_search" />
      <form onSubmit={(event) => void submit(event)} aria-label="Accounts database" noValidate>
        <SearchError error={search.error} fields={[...FIELDS]} />
        <div className="form-grid">
          {input('login', 'Login', 'Exactly, upper and lower case alike.')}
          {input('domain', 'Domain', 'The site or the email domain.')}
          {input('url', 'Part of the URL', 'Only with another field.')}
          {input('password_sha1_prefix', 'Password SHA-1 prefix', "The first 5 hex digits of the password's SHA-1.")}
          <Field label="Or a password" hint="Its SHA-1 prefix is computed in this browser; the password is not sent.">
            {(control) => (
              <input
                {...control}
                type="password"
                autoComplete="off"
                value={password}
                onChange={(event) => setPassword(event.target.value)}
              />
            )}
          </Field>
        </div>
        <button type="submit" className="primary" disabled={search.isPending}>
          {search.isPending ? 'Searching…' : 'Search'}
        </button>
      </form>
      {search.data && (
        <section aria-label="Accounts found">
          <p role="status">{plural(search.data.count, 'distinct credential')}</p>
          {search.data.results.length > 0 && (
            <Table label="Accounts found" headings={['Login', 'Password', 'Site', 'Leaks', 'First seen', 'Last seen']}>
              {search.data.results.map((account, index) => (
                <tr key={`${account.login} ${account.url} ${account.password} ${index}`}>
                  <td>{account.login}</td>
                  <td>
                    <code>{account.password}</code>
                    {account.password_type === 'hash' && (
                      <small className="muted"> ({account.hash_type ?? 'hash'})</small>
                    )}
                  </td>
                  <td className="wrap">{account.url ?? account.domain ?? '—'}</td>
                  <td>{account.occurrences.toLocaleString()}</td>
                  <td>{formatDateTime(account.first_seen)}</td>
                  <td>{formatDateTime(account.last_seen)}</td>
                </tr>
              ))}
            </Table>
          )}
          <Pager
            label="Pages of accounts"
            page={page}
            pages={Math.ceil(search.data.count / ACCOUNTS_PAGE_SIZE)}
            to={(target, text) => (
              <button type="button" key={text} onClick={() => search.mutate({ ...asked, page: target })}>
                {text}
              </button>
            )}
          />
        </section>
      )}
    </section>
  );
}
