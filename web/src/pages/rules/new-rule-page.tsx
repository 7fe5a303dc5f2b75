import { getRouteApi } from '@tanstack/react-router';
import { Page } from '../../ui/page.tsx';

const route = getRouteApi('/app/rules/new');

/**
 * Stand-in until the rules pages land (issue 14, "Rules"): shows the rule a link describes. The
 * rules form replaces this component and keeps the address contract of new-rule-search.ts.
 */
export function NewRulePage() {
  const search = route.useSearch();
  return (
    <Page title="New monitoring rule">
      <p className="notice warning">The rule form is not part of this build yet. This is the rule the link describes:</p>
      <dl className="card">
        <dt>Name</dt>
        <dd>{search.name ?? '—'}</dd>
        <dt>Service</dt>
        <dd>{search.service ?? '—'}</dd>
        <dt>Arguments</dt>
        <dd>
          <pre>{JSON.stringify(search.args ?? {}, null, 2)}</pre>
        </dd>
      </dl>
    </Page>
  );
}
