import { isoDateWithOffset as isoWithOffset } from '../../../lib/iso-date.ts';

/**
 * What a notification says, and how each destination wants it said (spec 6.2). The generic
 * payload carries no hits; Slack, Microsoft Teams and Discord URLs get their native formats,
 * kept within each service's documented size limits.
 */
export interface AlertNotice {
  alertRuleName: string;
  service: string;
  /** All hits of the run, excluded ones included. */
  totalMatches: number;
  excludedMatches: number;
  resultsUrl: string;
  at: Date;
}

export type PayloadKind = 'generic' | 'slack' | 'teams_message_card' | 'teams_adaptive_card' | 'discord';

export function payloadKindFor(url: URL): PayloadKind {
  const host = url.hostname.toLowerCase();
  if (host === 'hooks.slack.com') return 'slack';
  if (host.endsWith('.webhook.office.com')) return 'teams_message_card';
  if (host.endsWith('.logic.azure.com') || host.endsWith('.environment.api.powerplatform.com'))
    return 'teams_adaptive_card';
  if (/^(ptb\.|canary\.)?discord(app)?\.com$/.test(host) && url.pathname.startsWith('/api/webhooks/')) return 'discord';
  return 'generic';
}

const cut = (text: string, max: number) =>
  [...text].length <= max ? text : `${[...text].slice(0, max - 1).join('')}…`;

const newHits = (n: AlertNotice) => n.totalMatches - n.excludedMatches;
const headline = (n: AlertNotice) => `${newHits(n)} new hits for "${n.alertRuleName}" in ${n.service}`;
const facts = (n: AlertNotice) => [
  { name: 'Rule', value: n.alertRuleName },
  { name: 'Source', value: n.service },
  { name: 'New hits', value: String(newHits(n)) },
  { name: 'Excluded', value: String(n.excludedMatches) },
];

/** Slack mrkdwn treats &, < and > as control characters (links, @channel): escape them. */
const slackEscape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function slack(n: AlertNotice) {
  // Block Kit: header text ≤ 150, section text ≤ 3000, button text ≤ 75, url ≤ 3000.
  return {
    text: cut(`Dragnet: ${slackEscape(headline(n))} ${n.resultsUrl}`, 3000),
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: cut(`Dragnet: ${headline(n)}`, 150) } },
      {
        type: 'section',
        fields: facts(n).map((f) => ({ type: 'mrkdwn', text: cut(`*${f.name}*\n${slackEscape(f.value)}`, 2000) })),
      },
      {
        type: 'actions',
        elements: [
          { type: 'button', text: { type: 'plain_text', text: 'Review the hits' }, url: cut(n.resultsUrl, 3000) },
        ],
      },
    ],
  };
}

function teamsMessageCard(n: AlertNotice) {
  return {
    '@type': 'MessageCard',
    '@context': 'https://schema.org/extensions',
    summary: cut(headline(n), 200),
    themeColor: 'D93025',
    title: cut(`Dragnet: ${headline(n)}`, 400),
    sections: [{ facts: facts(n).map((f) => ({ name: f.name, value: cut(f.value, 400) })), markdown: false }],
    potentialAction: [{ '@type': 'OpenUri', name: 'Review the hits', targets: [{ os: 'default', uri: n.resultsUrl }] }],
  };
}

function teamsAdaptiveCard(n: AlertNotice) {
  return {
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        contentUrl: null,
        content: {
          $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
          type: 'AdaptiveCard',
          version: '1.4',
          body: [
            {
              type: 'TextBlock',
              text: cut(`Dragnet: ${headline(n)}`, 400),
              weight: 'Bolder',
              size: 'Medium',
              wrap: true,
            },
            { type: 'FactSet', facts: facts(n).map((f) => ({ title: f.name, value: cut(f.value, 400) })) },
          ],
          actions: [{ type: 'Action.OpenUrl', title: 'Review the hits', url: n.resultsUrl }],
        },
      },
    ],
  };
}

function discord(n: AlertNotice) {
  // Embed limits: title 256, description 4096, field name 256 / value 1024, 6000 in all.
  return {
    username: 'Dragnet',
    allowed_mentions: { parse: [] },
    embeds: [
      {
        title: cut(`Dragnet: ${headline(n)}`, 256),
        url: n.resultsUrl,
        color: 0xd93025,
        timestamp: n.at.toISOString(),
        fields: facts(n).map((f) => ({ name: f.name, value: cut(f.value, 1024), inline: true })),
      },
    ],
  };
}

function generic(n: AlertNotice) {
  return {
    alert_rule_name: n.alertRuleName,
    service: n.service,
    total_matches: n.totalMatches,
    excluded_matches: n.excludedMatches,
    results_url: n.resultsUrl,
    timestamp: isoWithOffset(n.at),
  };
}

const builders: Record<PayloadKind, (n: AlertNotice) => object> = {
  generic,
  slack,
  teams_message_card: teamsMessageCard,
  teams_adaptive_card: teamsAdaptiveCard,
  discord,
};

export const buildPayload = (kind: PayloadKind, notice: AlertNotice): object => builders[kind](notice);
