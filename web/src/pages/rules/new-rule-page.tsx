import { getRouteApi } from '@tanstack/react-router';
import { Page } from '../../ui/page.tsx';
import { RuleForm } from './rule-form.tsx';

const route = getRouteApi('/app/rules/new');

/**
 * A new monitoring rule. The address may describe it (new-rule-search.ts): "create a rule from
 * this search" opens the messenger form filled with the search's query and options.
 */
export function NewRulePage() {
  const search = route.useSearch();
  return (
    <Page title="New monitoring rule">
      <RuleForm
        // Another address (a second search's link) starts the form again.
        key={JSON.stringify(search)}
        draft={{ name: search.name, service: search.service, args: search.args, followUpToken: search.follow_up_token }}
      />
    </Page>
  );
}
