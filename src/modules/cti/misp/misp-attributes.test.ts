import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { StixObject } from '../stix/stix-mapper.ts';
import { attributesOfObjects, indicatedValues } from './misp-attributes.ts';
import { v5 } from 'uuid';
import { createAttributeCollector, eventUuid, hashedValues, orgUuid } from './misp-event.ts';
import type { ExportedHit } from '../exported-hits.ts';

const SHARED_TYPES = '/work/shared/misp/category-types.json';
// MISP's list where ../shared has it; otherwise the rows used here, from misp-rfc "Attribute / type".
const categoryTypes: Record<string, string[]> = existsSync(SHARED_TYPES)
  ? (JSON.parse(readFileSync(SHARED_TYPES, 'utf8')) as { categories: Record<string, string[]> }).categories
  : {
      'Network activity': ['ip-dst', 'domain', 'email', 'url', 'AS', 'stix2-pattern', 'text'],
      'External analysis': ['filename', 'filename|sha256', 'sha256', 'md5'],
      'Targeting data': ['target-user'],
      Other: ['text'],
    };
// x509 fingerprints are in the "Network activity" row of MISP's list too.
categoryTypes['Network activity'] = [
  ...new Set([...categoryTypes['Network activity']!, 'x509-fingerprint-sha1', 'x509-fingerprint-sha256']),
];

const o = (type: string, props: Record<string, unknown>): StixObject => ({ type, id: `${type}--x`, ...props });

/** The STIX 2.1 objects a hit of each kind may come as (docs/stix.md), each property as the spec names it. */
const phishingObjects = [
  o('domain-name', { value: 'acme-bank-login.com' }),
  o('ipv4-addr', { value: '203.0.113.7' }),
  o('ipv6-addr', { value: '2001:db8::7' }),
  o('indicator', { pattern: "[domain-name:value = 'acme-bank-login.com']", pattern_type: 'stix', name: 'Lookalike' }),
  o('observed-data', { first_observed: '2026-03-01T00:00:00Z', number_observed: 1, object_refs: [] }),
  o('sighting', { sighting_of_ref: 'indicator--x' }),
  o('identity', { name: 'Dragnet' }),
];

describe('STIX objects → MISP attributes', () => {
  it('maps each observable to its MISP type, in a category that allows it', () => {
    const attributes = attributesOfObjects(
      [
        ...phishingObjects,
        o('url', { value: 'https://acme-bank-login.com/signin' }),
        o('email-addr', { value: 'ceo@acme-bank.com' }),
        o('x509-certificate', {
          hashes: { 'SHA-1': 'AB'.repeat(20), 'SHA-256': 'cd'.repeat(32) },
          subject: 'CN=acme-bank-login.com',
          issuer: "CN=Let's Encrypt",
          serial_number: '01:02',
        }),
        o('file', { name: 'customers.csv', hashes: { 'SHA-256': 'ef'.repeat(32) } }),
        o('file', { name: 'backup.sql' }),
        o('software', { name: 'Acme Bank', version: '1.2', vendor: 'Fake Dev' }),
        o('note', { content: 'fresh logs acme-bank.com', abstract: 'post' }),
        o('autonomous-system', { number: 64500 }),
        o('x-unknown', { value: 'ignored' }),
      ],
      8,
    );
    expect(attributes.map(({ type, category, value, to_ids }) => [type, category, value, to_ids])).toEqual([
      ['domain', 'Network activity', 'acme-bank-login.com', true],
      ['ip-dst', 'Network activity', '203.0.113.7', false],
      ['ip-dst', 'Network activity', '2001:db8::7', false],
      ['url', 'Network activity', 'https://acme-bank-login.com/signin', false],
      ['email', 'Network activity', 'ceo@acme-bank.com', false],
      ['x509-fingerprint-sha1', 'Network activity', 'ab'.repeat(20), false],
      ['x509-fingerprint-sha256', 'Network activity', 'cd'.repeat(32), false],
      [
        'text',
        'Network activity',
        "subject=CN=acme-bank-login.com; issuer=CN=Let's Encrypt; serial_number=01:02",
        false,
      ],
      ['filename|sha256', 'External analysis', `customers.csv|${'ef'.repeat(32)}`, false],
      ['filename', 'External analysis', 'backup.sql', false],
      ['text', 'Other', 'Acme Bank 1.2 (Fake Dev)', false],
      ['text', 'Other', 'fresh logs acme-bank.com', false],
      ['AS', 'Network activity', '64500', false],
    ]);
    for (const { category, type } of attributes) expect(categoryTypes[category], `${category}/${type}`).toContain(type);
  });

  it("a user account is the organization's target-user in a leak, text elsewhere", () => {
    const account = o('user-account', { account_login: 'j.doe@acme-bank.com', account_type: 'unix' });
    expect(attributesOfObjects([account], 3)).toMatchObject([{ type: 'target-user', category: 'Targeting data' }]);
    expect(attributesOfObjects([account], 11)).toMatchObject([{ type: 'text', category: 'Other' }]);
    expect(attributesOfObjects([o('user-account', { user_id: '42' })], 1)).toMatchObject([{ value: '42' }]);
    expect(categoryTypes['Targeting data']).toContain('target-user');
  });

  it('reads the values an indicator names; adds those no observable carries; passes other patterns whole', () => {
    expect(
      indicatedValues(
        o('indicator', { pattern: "[url:value = 'https://x.test/a\\'b'] OR [domain-name:value = 'x.test']" }),
      ),
    ).toEqual([
      { type: 'url', value: "https://x.test/a'b" },
      { type: 'domain-name', value: 'x.test' },
    ]);
    expect(indicatedValues(o('indicator', { pattern: "[file:hashes.'SHA-256' = 'aa']" }))).toBeNull();
    expect(indicatedValues(o('indicator', { pattern: "[url:value = 'a']", pattern_type: 'sigma' }))).toBeNull();

    const onlyIndicator = attributesOfObjects(
      [o('indicator', { pattern: "[url:value = 'https://x.test/login']", name: 'Phishing URL' })],
      15,
    );
    expect(onlyIndicator).toEqual([
      {
        type: 'url',
        category: 'Network activity',
        value: 'https://x.test/login',
        to_ids: true,
        comment: 'Phishing URL',
      },
    ]);
    const other = attributesOfObjects([o('indicator', { pattern: "[file:hashes.'SHA-256' = 'aa']" })], 14);
    expect(other).toMatchObject([{ type: 'stix2-pattern', to_ids: true }]);
  });

  it('an event gives each (type, value) once, with a uuid that depends on the event, the hit and the value', () => {
    const hit = (key: string) => ({ ruleId: 1, key, sourceId: 8, addedAt: 1_700_000_000_000 }) as ExportedHit;
    const objects = () => phishingObjects;
    const first = createAttributeCollector('e1', objects);
    expect(first.add(hit('a'))).toHaveLength(3);
    expect(first.add(hit('b'))).toEqual([]);
    const again = createAttributeCollector('e1', objects);
    again.add(hit('a'));
    expect(again.attributes()).toEqual(first.attributes());
    const elsewhere = createAttributeCollector('e2', objects);
    elsewhere.add(hit('a'));
    expect(elsewhere.attributes()[0]!.uuid).not.toBe(first.attributes()[0]!.uuid);
    expect(first.attributes()[0]).toMatchObject({ timestamp: '1700000000', distribution: '5' });
  });

  it('hashes a composite value part by part, as MISP feeds do', () => {
    expect(hashedValues({ type: 'filename|sha256', value: 'a.csv|ff' })).toEqual(['a.csv', 'ff']);
    expect(hashedValues({ type: 'url', value: 'https://x.test/a|b' })).toEqual(['https://x.test/a|b']);
  });

  it('event and organization uuids are the UUIDv5 of docs/misp.md (namespace 5f0c6f0e-…), never changing', () => {
    const namespace = '5f0c6f0e-2d3b-5a8e-9c41-7d2e8b1a6c39';
    expect(eventUuid(7, 1234)).toBe(v5('event:org:7:incident:1234', namespace));
    expect(orgUuid(7)).toBe(v5('org:7', namespace));
  });
});
