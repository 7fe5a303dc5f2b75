/** spec 2.7: a template body must contain all of these. */
export const REQUIRED_PLACEHOLDERS = [
  'current_date',
  'alert_rule_name',
  'number_of_hits',
  'service',
  'match_detail_link',
] as const;
/** Substituted too when present. */
export const OPTIONAL_PLACEHOLDERS = ['total_results', 'excluded_count'] as const;

export type PlaceholderName = (typeof REQUIRED_PLACEHOLDERS)[number] | (typeof OPTIONAL_PLACEHOLDERS)[number];
export type TemplateValues = Record<PlaceholderName, string | number>;

const PLACEHOLDER = new RegExp(`\\{(${[...REQUIRED_PLACEHOLDERS, ...OPTIONAL_PLACEHOLDERS].join('|')})\\}`, 'g');

export const missingPlaceholders = (body: string): string[] =>
  REQUIRED_PLACEHOLDERS.filter((name) => !body.includes(`{${name}}`)).map((name) => `{${name}}`);

export const escapeHtml = (value: string): string =>
  value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

export interface RenderedEmail {
  subject: string;
  html: string;
  text: string;
}

/** A plain-text alternative of the HTML body, for mail clients that show no HTML. */
function htmlToText(html: string): string {
  return html
    .replace(/<(style|head)[\s\S]*?<\/\1>/gi, '')
    .replace(/<a [^>]*href="([^"]*)"[^>]*>([\s\S]*?)<\/a>/gi, '$2 ($1)')
    .replace(/<(br|\/p|\/div|\/tr|\/h\d|\/li)[^>]*>/gi, '\n')
    .replace(/<[^>]+>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/**
 * One pass over the text, so a value that itself looks like a placeholder (a rule named
 * "{service}") is not substituted again. Values are HTML-escaped in the body; the subject is
 * plain text and loses line breaks (no header injection).
 */
export function renderTemplate(template: { subject: string; body: string }, values: TemplateValues): RenderedEmail {
  const substitute = (text: string, encode: (v: string) => string) =>
    text.replace(PLACEHOLDER, (_match, name: PlaceholderName) => encode(String(values[name])));
  const html = substitute(template.body, escapeHtml);
  return {
    subject: substitute(template.subject, (v) => v).replace(/[\r\n]+/g, ' '),
    html,
    text: htmlToText(html),
  };
}
