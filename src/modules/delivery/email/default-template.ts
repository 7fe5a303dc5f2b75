/** The template every organization starts with (docs/delivery.md). */
export const DEFAULT_TEMPLATE = {
  name: 'Dragnet default',
  subject: '[Dragnet] {number_of_hits} new hits for "{alert_rule_name}" ({service})',
  body: `<!doctype html>
<html>
<body style="margin:0;padding:0;background:#f3f4f6;font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;color:#111827;">
  <table role="presentation" width="100%" cellspacing="0" cellpadding="0" style="background:#f3f4f6;padding:24px 0;">
    <tr><td align="center">
      <table role="presentation" width="600" cellspacing="0" cellpadding="0" style="background:#ffffff;border-radius:8px;overflow:hidden;border:1px solid #e5e7eb;">
        <tr><td style="background:#111827;color:#ffffff;padding:20px 28px;font-size:18px;font-weight:600;">Dragnet alert</td></tr>
        <tr><td style="padding:28px;">
          <p style="margin:0 0 16px;font-size:16px;">Your monitoring rule <strong>{alert_rule_name}</strong> found
            <strong>{number_of_hits}</strong> new hits in <strong>{service}</strong>.</p>
          <table role="presentation" cellspacing="0" cellpadding="0" style="margin:0 0 24px;font-size:14px;color:#374151;">
            <tr><td style="padding:4px 16px 4px 0;">New hits</td><td><strong>{number_of_hits}</strong></td></tr>
            <tr><td style="padding:4px 16px 4px 0;">All results</td><td>{total_results}</td></tr>
            <tr><td style="padding:4px 16px 4px 0;">Excluded</td><td>{excluded_count}</td></tr>
            <tr><td style="padding:4px 16px 4px 0;">Date</td><td>{current_date}</td></tr>
          </table>
          <a href="{match_detail_link}" style="display:inline-block;background:#2563eb;color:#ffffff;text-decoration:none;padding:12px 20px;border-radius:6px;font-weight:600;">Review the hits</a>
        </td></tr>
        <tr><td style="padding:16px 28px;font-size:12px;color:#6b7280;border-top:1px solid #e5e7eb;">
          You receive this because you are a recipient of this rule. The hits themselves are only in Dragnet.
        </td></tr>
      </table>
    </td></tr>
  </table>
</body>
</html>`,
} as const;
