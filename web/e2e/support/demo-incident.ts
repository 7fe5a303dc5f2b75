import { scaled, waitFor } from '../../../test/support/wait.ts';
import type { DashboardServer } from './dashboard-server.ts';

/** The demo account's API, as a script beside the browser calls it (fetch, bearer token). */
export async function demoApi(dashboard: DashboardServer) {
  const call = async (path: string, body?: unknown, token?: string) => {
    const response = await fetch(`${dashboard.baseUrl}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const answer = (await response.json()) as Record<string, unknown>;
    if (!response.ok) throw new Error(`${path}: ${response.status} ${JSON.stringify(answer)}`);
    return answer;
  };
  const { access } = (await call('/token/', dashboard.demo)) as { access: string };
  const get = (path: string) => call(path, undefined, access);
  const recipient = await call('/service/alert_system_setting_create_recipient/', { email: 'soc@acme.test' }, access);
  const templates = await get('/service/alert_system_setting_get_template_list/');
  const template = (templates.results as { id: number }[])[0]!.id;

  return {
    get,
    /**
     * A rule made with these args, and the match (incident) its first run recorded; an async
     * source's match is waited for until its background job has filled it.
     */
    async incident(service: number, args: Record<string, unknown>, name: string) {
      const rule = await call(
        '/service/alert_system_alert_create_alert_rule/',
        { name, service, args, recipients: [recipient.id], email_template: template },
        access,
      );
      const ruleId = Number(rule.id);
      const match = await waitFor(
        `the first complete match of ${name}`,
        async () => {
          const matches = await get(`/service/alert_system_match_get_match_list/${ruleId}/`);
          const [first] = matches.results as { id: number; status: string }[];
          return first?.status === 'complete' && first;
        },
        { timeoutMs: scaled(60_000), everyMs: 250 },
      );
      return { ruleId, matchId: match.id, ruleName: name };
    },
  };
}

/** A messenger rule on the demo data and its first match: what a notification link opens. */
export async function createDemoIncident(dashboard: DashboardServer, query = '"fresh logs" AND acme-bank.com') {
  return (await demoApi(dashboard)).incident(1, { query }, `Acme Bank: ${query}`);
}
