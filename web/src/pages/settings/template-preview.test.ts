import { describe, expect, it } from 'vitest';
import { previewTemplate, sampleValues } from './template-preview.ts';

const values = sampleValues('https://intel.acme.test/', new Date('2026-03-10T09:00:00Z'));

describe('the template preview', () => {
  it('fills every placeholder with a sample run, in the subject and the body, linking to the incident page', () => {
    const preview = previewTemplate(
      {
        subject: '{alert_rule_name}: {number_of_hits} hits',
        body: '<p>{current_date} {alert_rule_name} {number_of_hits} of {total_results} ({excluded_count} excluded) in {service}</p><a href="{match_detail_link}">open</a>',
      },
      values,
    );
    expect(preview.subject).toBe('Acme Bank on messenger channels: 12 hits');
    expect(preview.html).toBe(
      '<p>2026-03-10 Acme Bank on messenger channels 12 of 14 (2 excluded) in Messenger channels</p><a href="https://intel.acme.test/incidents/123">open</a>',
    );
    expect(preview.missing).toEqual([]);
    expect(preview.unknown).toEqual([]);
  });

  it('escapes values in the HTML body as the server does, not in the plain-text subject', () => {
    const preview = previewTemplate(
      { subject: 'Rule {alert_rule_name}', body: '<b>{alert_rule_name}</b>' },
      { ...values, alert_rule_name: '<Acme & "Co">' },
    );
    expect(preview.html).toBe('<b>&lt;Acme &amp; &quot;Co&quot;&gt;</b>');
    expect(preview.subject).toBe('Rule <Acme & "Co">');
  });

  it('names the required placeholders the body lacks, and braced words that are no placeholder', () => {
    const preview = previewTemplate(
      { subject: 'Hits for {rule_name}', body: '<p>{alert_rule_name}: {number_of_hits} {servce}</p>' },
      values,
    );
    expect(preview.missing).toEqual(['{current_date}', '{service}', '{match_detail_link}']);
    expect(preview.unknown).toEqual(['{rule_name}', '{servce}']);
    // Unknown ones stay as typed.
    expect(preview.html).toContain('{servce}');
  });
});
