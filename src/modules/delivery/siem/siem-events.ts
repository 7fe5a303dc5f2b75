import { hostname } from 'node:os';

/**
 * What Dragnet tells a SIEM about one hit (docs/siem.md "Events"): the same content in every
 * format, flat where a SIEM indexes fields, the hit's own fields as the hits endpoint shows them
 * (a credential's password masked, never clear).
 */
export interface SiemEvent {
  org: { id: number; name: string };
  rule: { id: number; name: string };
  incident: { id: number; link: string };
  /** The source's alias (e.g. "filtered_leak") and catalog id. */
  source: { id: number; alias: string };
  tlp: string;
  hit: { key: string; date: Date; fields: Record<string, unknown> };
}

/** The product version CEF headers and HEC events carry. */
export const DRAGNET_VERSION = '0.1.0';

/** The event body: HEC's `event`, syslog's JSON MSG. */
export const eventBody = (event: SiemEvent) => ({
  product: 'Dragnet',
  type: 'hit',
  org_id: event.org.id,
  org_name: event.org.name,
  rule_id: event.rule.id,
  rule_name: event.rule.name,
  incident_id: event.incident.id,
  incident_link: event.incident.link,
  source: event.source.alias,
  source_id: event.source.id,
  tlp: event.tlp,
  hit_key: event.hit.key,
  hit_date: event.hit.date.toISOString(),
  fields: event.hit.fields,
});

/** The host name events say they come from: this Dragnet instance's, as syslog HOSTNAME allows it. */
export const originHost = () => printable(hostname(), 255) || '-';

/** Printable US-ASCII without spaces (RFC 5424 PRINTUSASCII), at most `max` characters. */
const printable = (text: string, max: number) => text.replace(/[^\x21-\x7e]/g, '').slice(0, max);

// ---------------------------------------------------------------- Splunk HEC

export interface HecMetadata {
  index: string | null;
  source: string | null;
  sourcetype: string | null;
}

/** One HEC event object (https://docs.splunk.com/Documentation/Splunk/latest/Data/FormateventsforHTTPEventCollector). */
export function hecEvent(event: SiemEvent, meta: HecMetadata, host: string) {
  return {
    // HEC reads epoch seconds, with a fraction for milliseconds.
    time: event.hit.date.getTime() / 1000,
    host,
    source: meta.source ?? 'dragnet',
    sourcetype: meta.sourcetype ?? '_json',
    ...(meta.index ? { index: meta.index } : {}),
    event: eventBody(event),
  };
}

/** HEC takes several events in one body, one JSON object after another. */
const HEC_BATCH_EVENTS = 500;
/** Below HEC's default max_content_length (1 MB, 800 KB before 8.x), whatever the events hold. */
const HEC_BATCH_BYTES = 512 * 1024;

/** The request bodies that carry `events`: at most HEC_BATCH_EVENTS and about HEC_BATCH_BYTES each. */
export function hecBodies(events: object[]): Buffer[] {
  const bodies: Buffer[] = [];
  let current: string[] = [];
  let size = 0;
  for (const event of events) {
    const line = JSON.stringify(event);
    const bytes = Buffer.byteLength(line) + 1;
    if (current.length && (current.length >= HEC_BATCH_EVENTS || size + bytes > HEC_BATCH_BYTES)) {
      bodies.push(Buffer.from(current.join('\n')));
      current = [];
      size = 0;
    }
    current.push(line);
    size += bytes;
  }
  if (current.length) bodies.push(Buffer.from(current.join('\n')));
  return bodies;
}

// ---------------------------------------------------------------- syslog

export interface SyslogOptions {
  format: 'json' | 'cef';
  appName: string;
  /** RFC 5424 facility, 0–23. */
  facility: number;
  host: string;
}

/** RFC 5424 severity 4 (warning): a hit is something to look at, not an outage. */
const SYSLOG_SEVERITY = 4;
/** CEF severity (0–10) of a hit: medium. */
const CEF_SEVERITY = 5;

/** CEF header fields: a backslash and a pipe are escaped; a line break cannot appear. */
export const cefHeader = (text: string) => text.replace(/[\\|]/g, (c) => `\\${c}`).replace(/\r\n|\r|\n/g, ' ');

/** CEF extension values: backslash and equals sign escaped, line breaks written as \n and \r. */
export const cefValue = (text: string) =>
  text
    .replace(/[\\=]/g, (c) => `\\${c}`)
    .replace(/\r\n|\n/g, '\\n')
    .replace(/\r/g, '\\r');

/** An ArcSight CEF line for the hit (docs/siem.md "CEF fields"). */
export function cefMessage(event: SiemEvent): string {
  const header = [
    'CEF:0',
    'Dragnet',
    'Dragnet',
    DRAGNET_VERSION,
    `hit:${event.source.alias}`,
    `New ${event.source.alias} hit for rule ${event.rule.name}`,
    String(CEF_SEVERITY),
  ].map((field, i) => (i === 0 ? field : cefHeader(field)));
  const extension: [string, string][] = [
    ['rt', String(event.hit.date.getTime())],
    ['externalId', event.hit.key],
    ['msg', `${event.source.alias} hit ${event.hit.key} for rule ${event.rule.name} (incident ${event.incident.id})`],
    ['cs1Label', 'organization'],
    ['cs1', event.org.name],
    ['cs2Label', 'rule'],
    ['cs2', event.rule.name],
    ['cs3Label', 'incidentLink'],
    ['cs3', event.incident.link],
    ['cs4Label', 'source'],
    ['cs4', event.source.alias],
    ['cs5Label', 'tlp'],
    ['cs5', event.tlp],
    ['cs6Label', 'fields'],
    ['cs6', JSON.stringify(event.hit.fields)],
    ['cn1Label', 'incidentId'],
    ['cn1', String(event.incident.id)],
    ['cn2Label', 'ruleId'],
    ['cn2', String(event.rule.id)],
    ['cn3Label', 'organizationId'],
    ['cn3', String(event.org.id)],
  ];
  return `${header.join('|')}|${extension.map(([key, value]) => `${key}=${cefValue(value)}`).join(' ')}`;
}

/**
 * An RFC 5424 message: `<PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID - MSG`, MSG the JSON
 * event or the CEF line (MSG-ANY: no BOM, which CEF parsers would trip on).
 */
export function syslogMessage(event: SiemEvent, options: SyslogOptions, at: Date): string {
  const pri = options.facility * 8 + SYSLOG_SEVERITY;
  const msg = options.format === 'cef' ? cefMessage(event) : JSON.stringify(eventBody(event));
  const appName = printable(options.appName, 48) || '-';
  return `<${pri}>1 ${at.toISOString()} ${printable(options.host, 255) || '-'} ${appName} ${process.pid} hit - ${msg}`;
}

/** RFC 5425 octet-counting: `MSG-LEN SP SYSLOG-MSG`, the length in bytes. */
export const octetCounted = (message: string) => `${Buffer.byteLength(message)} ${message}`;
