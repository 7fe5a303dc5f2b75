import { getRouteApi, Link } from '@tanstack/react-router';
import { ErrorNotice, Loading } from '../../ui/notices.tsx';
import { Page } from '../../ui/page.tsx';
import { RuleForm } from './rule-form.tsx';
import { useRule } from './rule-queries.ts';

const route = getRouteApi('/app/rules/$ruleId/edit');

/** Edits a rule: a full replacement (spec 4.5 PUT) with the same checks as creating one. */
export function EditRulePage() {
  const { ruleId } = route.useParams();
  const rule = useRule(ruleId);
  return (
    <Page title={rule.data ? `Edit “${rule.data.name}”` : 'Edit the rule'}>
      {rule.isPending && <Loading />}
      <ErrorNotice error={rule.error} />
      {rule.data?.is_deleted && (
        <p className="notice warning">
          This rule is deleted.{' '}
          <Link to="/rules/$ruleId" params={{ ruleId }}>
            Restore it
          </Link>{' '}
          before editing it.
        </p>
      )}
      {rule.data && !rule.data.is_deleted && <RuleForm key={rule.data.updated_at} rule={rule.data} draft={{}} />}
    </Page>
  );
}
