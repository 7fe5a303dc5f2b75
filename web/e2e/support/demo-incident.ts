import type { DashboardServer } from './dashboard-server.ts';

/**
 * A messenger rule on the demo data, made through the API as the demo account, and the match
 * (incident) its first run recorded: what a notification link opens.
 */
export async function createDemoIncident(
  dashboard: DashboardServer,
  query = '"fresh logs" AND acme-bank.com',
): Promise<{ ruleId: number; matchId: number; ruleName: string }> {
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
  const recipient = await call('/service/alert_system_setting_create_recipient/', { email: 'soc@acme.test' }, access);
  const templates = await call('/service/alert_system_setting_get_template_list/', undefined, access);
  const ruleName = `Acme Bank: ${query}`;
  const rule = await call(
    '/service/alert_system_alert_create_alert_rule/',
    {
      name: ruleName,
      service: 1,
      args: { query },
      recipients: [recipient.id],
      email_template: (templates.results as { id: number }[])[0]!.id,
    },
    access,
  );
  const matches = await call(`/service/alert_system_match_get_match_list/${String(rule.id)}/`, undefined, access);
  return { ruleId: Number(rule.id), matchId: (matches.results as { id: number }[])[0]!.id, ruleName };
}
