import { describe, expect, it } from 'vitest';
import {
  buildPayload,
  payloadKindFor,
  type AlertNotice,
  type PayloadKind,
} from '../../src/modules/delivery/webhook/payloads.ts';

/**
 * The native formats of spec 6.2's "three chat-collaboration services", checked through the pure
 * builders (their hosts cannot be reached from a test) against each service's documented shape
 * and limits.
 */

const notice = (extra: Partial<AlertNotice> = {}): AlertNotice => ({
  alertRuleName: 'Acme credential leaks',
  service: 'Telegram',
  totalMatches: 12,
  excludedMatches: 5,
  resultsUrl: 'https://dragnet.acme.test/incidents/42',
  at: new Date('2026-03-10T09:30:00.000Z'),
  ...extra,
});

/** Characters as the services count them (code points, not UTF-16 units). */
const chars = (text: string) => [...text].length;

/** A notice whose every text is far over every limit, in multi-unit characters too. */
const huge = notice({
  alertRuleName: `${'🔥'.repeat(3000)}${'x'.repeat(5000)}`,
  service: 'S'.repeat(5000),
  totalMatches: 1_000_000,
  excludedMatches: 1,
});

const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?[+-]\d{2}:\d{2}$/;

describe('payloadKindFor: which URLs get a native format', () => {
  const cases: [string, PayloadKind][] = [
    ['https://hooks.slack.com/services/T000/B000/XXXX', 'slack'],
    ['https://HOOKS.SLACK.COM/services/T000/B000/XXXX', 'slack'],
    ['https://acme.webhook.office.com/webhookb2/abc@def/IncomingWebhook/123/456', 'teams_message_card'],
    [
      'https://prod-12.westus.logic.azure.com:443/workflows/abc/triggers/manual/paths/invoke?api-version=2016-06-01',
      'teams_adaptive_card',
    ],
    ['https://discord.com/api/webhooks/123/abc', 'discord'],
    ['https://discordapp.com/api/webhooks/123/abc', 'discord'],
    ['https://ptb.discord.com/api/webhooks/123/abc', 'discord'],
    // Look-alikes get the generic payload.
    ['https://hooks.slack.com.evil.test/services/x', 'generic'],
    ['https://evilhooks.slack.com/services/x', 'generic'],
    ['https://webhook.office.com.evil.test/x', 'generic'],
    ['https://notwebhook.office.com/x', 'generic'],
    ['https://logic.azure.com.evil.test/x', 'generic'],
    ['https://discord.com/channels/1/2', 'generic'],
    ['https://discord.com.evil.test/api/webhooks/1/x', 'generic'],
    ['https://example.com/hooks.slack.com', 'generic'],
    ['https://receiver.acme.test/dragnet', 'generic'],
  ];
  it.each(cases)('%s → %s', (url, kind) => {
    expect(payloadKindFor(new URL(url))).toBe(kind);
  });
});

describe('generic payload (spec 6.2)', () => {
  it('carries exactly the six documented fields, with the right types and no hits', () => {
    const payload = buildPayload('generic', notice()) as Record<string, unknown>;
    expect(payload).toEqual({
      alert_rule_name: 'Acme credential leaks',
      service: 'Telegram',
      total_matches: 12,
      excluded_matches: 5,
      results_url: 'https://dragnet.acme.test/incidents/42',
      timestamp: expect.stringMatching(ISO_WITH_OFFSET),
    });
    expect(Date.parse(payload.timestamp as string)).toBe(Date.parse('2026-03-10T09:30:00.000Z'));
    expect(Number.isInteger(payload.total_matches)).toBe(true);
    expect(Number.isInteger(payload.excluded_matches)).toBe(true);
  });
});

describe('Slack (Block Kit, incoming webhook)', () => {
  type Text = { type: string; text: string };
  type Block = { type: string; text?: Text; fields?: Text[]; elements?: { type: string; text: Text; url: string }[] };
  const slack = (n: AlertNotice) => buildPayload('slack', n) as { text: string; blocks: Block[] };

  it('has a fallback text and valid blocks: header, section fields, a link button', () => {
    const payload = slack(notice());
    expect(payload.text).toContain('Acme credential leaks');
    expect(payload.text).toContain('7'); // new hits: 12 total - 5 excluded
    expect(payload.blocks.length).toBeGreaterThan(0);
    expect(payload.blocks.length).toBeLessThanOrEqual(50);
    const header = payload.blocks.find((b) => b.type === 'header')!;
    expect(header.text!.type).toBe('plain_text');
    const section = payload.blocks.find((b) => b.type === 'section')!;
    expect(section.text ?? section.fields).toBeDefined();
    for (const field of section.fields ?? []) expect(['mrkdwn', 'plain_text']).toContain(field.type);
    const actions = payload.blocks.find((b) => b.type === 'actions')!;
    const button = actions.elements![0]!;
    expect(button).toMatchObject({
      type: 'button',
      text: { type: 'plain_text' },
      url: 'https://dragnet.acme.test/incidents/42',
    });
    for (const block of payload.blocks)
      expect(['header', 'section', 'actions', 'context', 'divider']).toContain(block.type);
  });

  it('stays within the Block Kit limits however long the inputs', () => {
    const payload = slack(huge);
    expect(chars(payload.text)).toBeLessThanOrEqual(40_000);
    for (const block of payload.blocks) {
      if (block.type === 'header') expect(chars(block.text!.text)).toBeLessThanOrEqual(150);
      if (block.type === 'section') {
        if (block.text) expect(chars(block.text.text)).toBeLessThanOrEqual(3000);
        expect((block.fields ?? []).length).toBeLessThanOrEqual(10);
        for (const field of block.fields ?? []) expect(chars(field.text)).toBeLessThanOrEqual(2000);
      }
      if (block.type === 'actions') {
        expect(block.elements!.length).toBeLessThanOrEqual(25);
        for (const element of block.elements!) {
          expect(chars(element.text.text)).toBeLessThanOrEqual(75);
          expect(chars(element.url)).toBeLessThanOrEqual(3000);
        }
      }
    }
    // No lone surrogates from cutting in the middle of an emoji.
    expect(JSON.stringify(payload)).not.toMatch(/\\ud[89a-f][0-9a-f]{2}/i);
  });

  it('escapes &, < and > in mrkdwn text, so a rule name cannot ping @channel or disguise a link', () => {
    const payload = slack(notice({ alertRuleName: 'Leaks <!channel> & <https://evil.test|Click>' }));
    const mrkdwn = [
      payload.text,
      ...payload.blocks.flatMap((b) =>
        [...(b.fields ?? []), ...(b.text ? [b.text] : [])].filter((x) => x.type === 'mrkdwn').map((x) => x.text),
      ),
    ];
    for (const text of mrkdwn) {
      expect(text).not.toContain('<!channel>');
      expect(text).not.toContain('<https://evil.test|Click>');
    }
    const ruleField = payload.blocks.flatMap((b) => b.fields ?? []).find((f) => f.text.includes('Leaks'))!;
    expect(ruleField.text).toContain('Leaks &lt;!channel&gt; &amp; &lt;https://evil.test|Click&gt;');
  });
});

describe('Microsoft Teams, legacy connector (*.webhook.office.com): MessageCard', () => {
  type Card = {
    '@type': string;
    '@context': string;
    summary?: string;
    text?: string;
    title?: string;
    themeColor?: string;
    sections?: { facts?: { name: string; value: string }[] }[];
    potentialAction?: { '@type': string; name: string; targets: { os: string; uri: string }[] }[];
  };
  const card = (n: AlertNotice) => buildPayload('teams_message_card', n) as Card;

  it('is a MessageCard with a summary, facts and an OpenUri action to the results', () => {
    const payload = card(notice());
    expect(payload['@type']).toBe('MessageCard');
    expect(payload['@context']).toMatch(/^https?:\/\/schema\.org\/extensions$/);
    expect(payload.summary ?? payload.text).toBeTruthy();
    if (payload.themeColor) expect(payload.themeColor).toMatch(/^#?[0-9A-Fa-f]{6}$/);
    const facts = payload.sections!.flatMap((s) => s.facts ?? []);
    expect(facts).toEqual(
      expect.arrayContaining([
        { name: expect.any(String), value: 'Acme credential leaks' },
        { name: expect.any(String), value: '7' },
      ]),
    );
    expect(payload.potentialAction).toEqual([
      {
        '@type': 'OpenUri',
        name: expect.any(String),
        targets: [{ os: 'default', uri: 'https://dragnet.acme.test/incidents/42' }],
      },
    ]);
  });

  it('stays under the 28 KB Teams message limit however long the inputs', () => {
    expect(Buffer.byteLength(JSON.stringify(card(huge)))).toBeLessThan(28 * 1024);
  });
});

describe('Microsoft Teams Workflows (*.logic.azure.com): Adaptive Card message', () => {
  type Element = { type: string; text?: string; facts?: { title: string; value: string }[] };
  type Message = {
    type: string;
    attachments: {
      contentType: string;
      contentUrl: unknown;
      content: {
        $schema: string;
        type: string;
        version: string;
        body: Element[];
        actions?: { type: string; title: string; url: string }[];
      };
    }[];
  };
  const message = (n: AlertNotice) => buildPayload('teams_adaptive_card', n) as Message;

  it('is a message with one Adaptive Card attachment (version Teams renders), body and an OpenUrl action', () => {
    const payload = message(notice());
    expect(payload.type).toBe('message');
    expect(payload.attachments).toHaveLength(1);
    const [attachment] = payload.attachments;
    expect(attachment!.contentType).toBe('application/vnd.microsoft.card.adaptive');
    const content = attachment!.content;
    expect(content.type).toBe('AdaptiveCard');
    expect(content.$schema).toBe('http://adaptivecards.io/schemas/adaptive-card.json');
    const [major, minor] = content.version.split('.').map(Number);
    expect(major).toBe(1);
    expect(minor).toBeLessThanOrEqual(5);
    expect(content.body.length).toBeGreaterThan(0);
    for (const element of content.body)
      expect(['TextBlock', 'FactSet', 'ColumnSet', 'Container']).toContain(element.type);
    const facts = content.body.flatMap((e) => e.facts ?? []);
    expect(facts).toEqual(expect.arrayContaining([{ title: expect.any(String), value: 'Telegram' }]));
    expect(content.actions).toEqual([
      { type: 'Action.OpenUrl', title: expect.any(String), url: 'https://dragnet.acme.test/incidents/42' },
    ]);
  });

  it('stays under the 28 KB Teams message limit however long the inputs', () => {
    expect(Buffer.byteLength(JSON.stringify(message(huge)))).toBeLessThan(28 * 1024);
  });
});

describe('Discord (execute webhook)', () => {
  type Embed = {
    title?: string;
    description?: string;
    url?: string;
    color?: number;
    timestamp?: string;
    footer?: { text: string };
    author?: { name: string };
    fields?: { name: string; value: string; inline?: boolean }[];
  };
  type Body = { content?: string; username?: string; embeds?: Embed[]; allowed_mentions?: { parse: string[] } };
  const discord = (n: AlertNotice) => buildPayload('discord', n) as Body;

  it('has content or embeds, a valid embed, and allows no mentions', () => {
    const payload = discord(notice());
    expect(payload.content || payload.embeds?.length).toBeTruthy();
    expect(payload.allowed_mentions).toEqual({ parse: [] });
    if (payload.username !== undefined) {
      expect(chars(payload.username)).toBeGreaterThanOrEqual(1);
      expect(chars(payload.username)).toBeLessThanOrEqual(80);
      expect(payload.username.toLowerCase()).not.toMatch(/discord|clyde/);
    }
    const [embed] = payload.embeds!;
    expect(embed!.url).toBe('https://dragnet.acme.test/incidents/42');
    expect(Number.isInteger(embed!.color)).toBe(true);
    expect(embed!.color).toBeGreaterThanOrEqual(0);
    expect(embed!.color).toBeLessThanOrEqual(0xffffff);
    expect(new Date(embed!.timestamp!).toISOString()).toBe('2026-03-10T09:30:00.000Z');
    expect(embed!.fields).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ value: 'Acme credential leaks' }),
        expect.objectContaining({ value: '7' }),
      ]),
    );
  });

  it('stays within the embed limits however long the inputs (title 256, field 256/1024, 25 fields, 6000 in all)', () => {
    const payload = discord(huge);
    if (payload.content !== undefined) expect(chars(payload.content)).toBeLessThanOrEqual(2000);
    expect(payload.embeds!.length).toBeLessThanOrEqual(10);
    let total = 0;
    for (const embed of payload.embeds!) {
      expect(chars(embed.title ?? '')).toBeLessThanOrEqual(256);
      expect(chars(embed.description ?? '')).toBeLessThanOrEqual(4096);
      expect((embed.fields ?? []).length).toBeLessThanOrEqual(25);
      for (const field of embed.fields ?? []) {
        expect(chars(field.name)).toBeLessThanOrEqual(256);
        expect(chars(field.value)).toBeLessThanOrEqual(1024);
        expect(chars(field.value)).toBeGreaterThan(0);
      }
      total +=
        chars(embed.title ?? '') +
        chars(embed.description ?? '') +
        chars(embed.footer?.text ?? '') +
        chars(embed.author?.name ?? '') +
        (embed.fields ?? []).reduce((sum, f) => sum + chars(f.name) + chars(f.value), 0);
    }
    expect(total).toBeLessThanOrEqual(6000);
  });
});
