import type { StixObject } from '../stix/stix-mapper.ts';

/** A MISP attribute before it is placed in an event: what the STIX objects of a hit say. */
export interface AttributeDraft {
  type: string;
  category: string;
  value: string;
  to_ids: boolean;
  comment: string;
}

/** The sources whose user accounts are the organization's own (leaked credentials): MISP's target-user. */
const LEAK_SOURCES = new Set([3, 4, 5]);

const NETWORK = 'Network activity';
const OTHER = 'Other';

const text = (value: unknown) => (typeof value === 'string' ? value.trim() : '');

/** A STIX `hashes` dictionary by the names STIX 2.1 gives them ('SHA-256', also 'SHA256' as some producers write). */
function hashOf(object: StixObject, algorithm: 'MD5' | 'SHA-1' | 'SHA-256'): string {
  const hashes = object.hashes;
  if (!hashes || typeof hashes !== 'object') return '';
  const byName = hashes as Record<string, unknown>;
  return text(byName[algorithm] ?? byName[algorithm.replace('-', '')]).toLowerCase();
}

const draft = (type: string, category: string, value: string, comment: string): AttributeDraft => ({
  type,
  category,
  value,
  to_ids: false,
  comment,
});

function x509Attributes(object: StixObject): AttributeDraft[] {
  const drafts: AttributeDraft[] = [];
  const sha1 = hashOf(object, 'SHA-1');
  const sha256 = hashOf(object, 'SHA-256');
  if (sha1) drafts.push(draft('x509-fingerprint-sha1', NETWORK, sha1, 'x509-certificate fingerprint'));
  if (sha256) drafts.push(draft('x509-fingerprint-sha256', NETWORK, sha256, 'x509-certificate fingerprint'));
  const described = (['subject', 'issuer', 'serial_number'] as const)
    .filter((field) => text(object[field]))
    .map((field) => `${field}=${text(object[field])}`)
    .join('; ');
  if (described) drafts.push(draft('text', NETWORK, described, 'x509-certificate'));
  return drafts;
}

function fileAttributes(object: StixObject): AttributeDraft[] {
  const name = text(object.name);
  const sha256 = hashOf(object, 'SHA-256');
  const category = 'External analysis';
  if (name && sha256) return [draft('filename|sha256', category, `${name}|${sha256}`, 'file')];
  const drafts: AttributeDraft[] = [];
  if (name) drafts.push(draft('filename', category, name, 'file'));
  if (sha256) drafts.push(draft('sha256', category, sha256, 'file'));
  const md5 = hashOf(object, 'MD5');
  if (md5) drafts.push(draft('md5', category, md5, 'file'));
  return drafts;
}

function userAccountAttributes(object: StixObject, sourceId: number): AttributeDraft[] {
  const login = text(object.account_login) || text(object.user_id) || text(object.display_name);
  if (!login) return [];
  const comment = ['user-account', text(object.account_type)].filter(Boolean).join(' ');
  return LEAK_SOURCES.has(sourceId)
    ? [{ ...draft('target-user', 'Targeting data', login, comment) }]
    : [draft('text', OTHER, login, comment)];
}

function softwareAttributes(object: StixObject): AttributeDraft[] {
  const name = text(object.name);
  if (!name) return [];
  const version = text(object.version);
  const vendor = text(object.vendor);
  const value = `${name}${version ? ` ${version}` : ''}${vendor ? ` (${vendor})` : ''}`;
  return [draft('text', OTHER, value, 'software')];
}

function noteAttributes(object: StixObject): AttributeDraft[] {
  const content = text(object.content);
  if (!content) return [];
  return [draft('text', OTHER, content, text(object.abstract) || 'note')];
}

/** The MISP type of the simple observables: the STIX `value` becomes the attribute's value. */
const VALUE_TYPES: Record<string, { type: string; category: string }> = {
  'domain-name': { type: 'domain', category: NETWORK },
  url: { type: 'url', category: NETWORK },
  // Neither the sender nor a recipient of a message: MISP's generic email type.
  'email-addr': { type: 'email', category: NETWORK },
  'ipv4-addr': { type: 'ip-dst', category: NETWORK },
  'ipv6-addr': { type: 'ip-dst', category: NETWORK },
};

/**
 * The MISP attributes one STIX object stands for (docs/misp.md "Mapping"). Objects that carry no
 * value of their own (identity, observed-data, sighting, marking definitions, relationships) give
 * none; an indicator's pattern is read by indicatedValues instead.
 */
export function attributesOfObject(object: StixObject, sourceId: number): AttributeDraft[] {
  const simple = VALUE_TYPES[object.type];
  if (simple) {
    const value = text(object.value);
    return value ? [draft(simple.type, simple.category, value, object.type)] : [];
  }
  switch (object.type) {
    case 'x509-certificate':
      return x509Attributes(object);
    case 'file':
      return fileAttributes(object);
    case 'user-account':
      return userAccountAttributes(object, sourceId);
    case 'software':
      return softwareAttributes(object);
    case 'note':
      return noteAttributes(object);
    case 'autonomous-system':
      return typeof object.number === 'number' ? [draft('AS', NETWORK, String(object.number), object.type)] : [];
    default:
      return [];
  }
}

// One comparison of a STIX pattern: [domain-name:value = 'x'] (values are quoted with \' and \\ escaped).
const COMPARISON = /([a-z0-9-]+):value\s*=\s*'((?:[^'\\]|\\.)*)'/g;

/**
 * The (STIX type, value) pairs an indicator's pattern names, when it is made of `<type>:value = '…'`
 * comparisons (what Dragnet's indicators are: a lookalike domain, a phishing URL). A pattern with
 * anything else is passed on whole as a stix2-pattern attribute.
 */
export function indicatedValues(indicator: StixObject): { type: string; value: string }[] | null {
  const pattern = text(indicator.pattern);
  if (!pattern || (indicator.pattern_type !== undefined && indicator.pattern_type !== 'stix')) return null;
  const found = [...pattern.matchAll(COMPARISON)].map((m) => ({
    type: m[1]!,
    value: m[2]!.replace(/\\(.)/g, '$1'),
  }));
  const rest = pattern
    .replace(COMPARISON, '')
    .replace(/\b(OR|AND)\b/g, '')
    .replace(/[[\]()\s]/g, '');
  return found.length > 0 && rest === '' ? found : null;
}

/**
 * The attributes of a hit's STIX objects, as they come from the mapper: one per observable value,
 * `to_ids` set on those an indicator names (and the indicator's values that no observable of the
 * hit carries added as their own attributes), duplicates (same type and value) given once.
 */
export function attributesOfObjects(objects: StixObject[], sourceId: number): AttributeDraft[] {
  const drafts = new Map<string, AttributeDraft>();
  const add = (attribute: AttributeDraft) => {
    const key = `${attribute.type}\u0000${attribute.value}`;
    const known = drafts.get(key);
    if (known) known.to_ids ||= attribute.to_ids;
    else drafts.set(key, attribute);
  };
  for (const object of objects) for (const attribute of attributesOfObject(object, sourceId)) add(attribute);
  for (const indicator of objects.filter((object) => object.type === 'indicator')) {
    const values = indicatedValues(indicator);
    if (!values) {
      const pattern = text(indicator.pattern);
      if (pattern)
        add({ ...draft('stix2-pattern', NETWORK, pattern, text(indicator.name) || 'indicator'), to_ids: true });
      continue;
    }
    for (const { type, value } of values) {
      const [attribute] = attributesOfObject({ type, id: indicator.id, value }, sourceId);
      if (attribute) add({ ...attribute, to_ids: true, comment: text(indicator.name) || attribute.comment });
    }
  }
  return [...drafts.values()];
}
