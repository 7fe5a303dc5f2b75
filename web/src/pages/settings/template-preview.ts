// The server's own renderer (pure string code), so the preview shows exactly what a rule sends.
import {
  missingPlaceholders,
  OPTIONAL_PLACEHOLDERS,
  REQUIRED_PLACEHOLDERS,
  renderTemplate,
  type TemplateValues,
} from '../../../../src/modules/delivery/email/template-render.ts';

export { REQUIRED_PLACEHOLDERS, OPTIONAL_PLACEHOLDERS };

/** Values a notification of a typical run would carry (spec 2.7), for the preview. */
export function sampleValues(dashboardUrl: string, today = new Date()): TemplateValues {
  return {
    current_date: today.toISOString().slice(0, 10),
    alert_rule_name: 'Acme Bank on messenger channels',
    number_of_hits: 12,
    service: 'Messenger channels',
    match_detail_link: `${dashboardUrl.replace(/\/+$/, '')}/incidents/123`,
    total_results: 14,
    excluded_count: 2,
  };
}

export interface TemplatePreview {
  subject: string;
  html: string;
  /** Required placeholders the body lacks: the server refuses the template (spec 2.7). */
  missing: string[];
  /** `{words}` in braces that are no placeholder (a typo stays in the email as typed). */
  unknown: string[];
}

const BRACED = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
const KNOWN: ReadonlySet<string> = new Set([...REQUIRED_PLACEHOLDERS, ...OPTIONAL_PLACEHOLDERS]);

export function previewTemplate(template: { subject: string; body: string }, values: TemplateValues): TemplatePreview {
  const rendered = renderTemplate(template, values);
  const unknown = new Set<string>();
  for (const text of [template.subject, template.body]) {
    for (const [braced, name] of text.matchAll(BRACED)) if (!KNOWN.has(name!)) unknown.add(braced);
  }
  return {
    subject: rendered.subject,
    html: rendered.html,
    missing: missingPlaceholders(template.body),
    unknown: [...unknown],
  };
}
