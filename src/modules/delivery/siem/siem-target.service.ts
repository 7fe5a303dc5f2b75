import { X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database, SiemTargetTable } from '../../../db/schema.ts';
import type { Engine } from '../../../db/store.ts';
import type { Clock } from '../../../lib/clock.ts';
import type { KeyRing } from '../../../lib/crypto.ts';
import { notFound, validationError } from '../../../lib/errors.ts';
import type { RefuseIfReferenced } from '../delivery-references.ts';
import { bool, iso } from '../row-values.ts';

export type SiemTargetRow = Selectable<SiemTargetTable>;
export type SiemKind = 'splunk_hec' | 'syslog';

export interface SiemTargetInput {
  name: string;
  kind: SiemKind;
  url?: string | null;
  /** Write-only; omitted on update keeps the stored token. */
  token?: string | null;
  index?: string | null;
  sourcetype?: string | null;
  source?: string | null;
  host?: string | null;
  port?: number | null;
  format?: 'json' | 'cef' | null;
  app_name?: string | null;
  facility?: number | null;
  verify_tls?: boolean;
  ca_pem?: string | null;
}

/** At most this many per organization, as webhooks (spec 8.2's limit for them). */
export const MAX_SIEM_TARGETS = 10;
/** RFC 5425's port for syslog over TLS. */
export const SYSLOG_TLS_PORT = 6514;
/** RFC 5424 facility 13, "log audit", unless the target says otherwise. */
const DEFAULT_FACILITY = 13;
const HOST_NAME =
  /^(?=.{1,253}$)[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?(\.[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?)*\.?$/;
/** HEC tokens are GUIDs; any visible ASCII is taken, nothing that could end a header line. */
const TOKEN = /^[\x21-\x7e]{1,512}$/;
/** HEC index, source and sourcetype: visible ASCII and spaces, as Splunk names them. */
const HEC_NAME = /^[\x20-\x7e]{1,255}$/;
const APP_NAME = /^[\x21-\x7e]{1,48}$/;

/** A target as the API shows it: the token never, only whether there is one. */
export const siemTargetView = (row: SiemTargetRow) => ({
  id: Number(row.id),
  name: row.name,
  kind: row.kind as SiemKind,
  url: row.url,
  has_token: row.token_sealed !== null,
  index: row.hec_index,
  sourcetype: row.sourcetype,
  source: row.source,
  host: row.host,
  port: row.port === null ? null : Number(row.port),
  format: row.format as 'json' | 'cef' | null,
  app_name: row.app_name,
  facility: row.facility === null ? null : Number(row.facility),
  verify_tls: bool(row.verify_tls),
  ca_pem: row.ca_pem,
  created_at: iso(row.created_at),
  updated_at: iso(row.updated_at),
});

const optional = (value: string | null | undefined) =>
  value === undefined || value === null || value === '' ? null : value;

function checkedCa(pem: string | null | undefined): string | null {
  const text = optional(pem?.trim());
  if (text === null) return null;
  if (!text.includes('-----BEGIN CERTIFICATE-----')) throw validationError('ca_pem', 'must be a PEM certificate');
  try {
    new X509Certificate(text);
  } catch {
    throw validationError('ca_pem', 'is not a readable PEM certificate');
  }
  return `${text}\n`;
}

function checkedHecName(field: 'index' | 'sourcetype' | 'source', value: string | null | undefined) {
  const text = optional(value?.trim());
  if (text !== null && !HEC_NAME.test(text)) throw validationError(field, 'must be printable ASCII, at most 255');
  return text;
}

function hecColumns(input: SiemTargetInput, keys: KeyRing, existing: SiemTargetRow | undefined) {
  let url: URL;
  if (!input.url) throw validationError('url', 'is required for a splunk_hec target');
  try {
    url = new URL(input.url);
  } catch {
    throw validationError('url', 'must be an absolute http(s) URL (the collector endpoint)');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw validationError('url', 'must use https or http');
  if (url.username || url.password) throw validationError('url', 'must not carry credentials; use token');
  const token = optional(input.token);
  if (token !== null && !TOKEN.test(token)) throw validationError('token', 'must be printable ASCII without spaces');
  const kept = existing?.kind === 'splunk_hec' ? existing.token_sealed : null;
  if (token === null && kept === null) throw validationError('token', 'is required for a splunk_hec target');
  return {
    url: input.url,
    token_sealed: token === null ? kept : keys.encryptSecret(token),
    hec_index: checkedHecName('index', input.index),
    sourcetype: checkedHecName('sourcetype', input.sourcetype),
    source: checkedHecName('source', input.source),
    host: null,
    port: null,
    format: null,
    app_name: null,
    facility: null,
  };
}

function syslogColumns(input: SiemTargetInput) {
  const host = input.host?.trim().replace(/^\[|\]$/g, '') ?? '';
  if (!host) throw validationError('host', 'is required for a syslog target');
  if (!isIP(host) && !HOST_NAME.test(host)) throw validationError('host', 'must be a host name or an IP address');
  const port = input.port ?? SYSLOG_TLS_PORT;
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw validationError('port', 'must be 1 to 65535');
  const facility = input.facility ?? DEFAULT_FACILITY;
  if (!Number.isInteger(facility) || facility < 0 || facility > 23)
    throw validationError('facility', 'must be 0 to 23');
  const appName = optional(input.app_name?.trim()) ?? 'dragnet';
  if (!APP_NAME.test(appName))
    throw validationError('app_name', 'must be 1 to 48 printable ASCII characters, no spaces');
  return {
    url: null,
    token_sealed: null,
    hec_index: null,
    sourcetype: null,
    source: null,
    host,
    port,
    format: input.format ?? 'json',
    app_name: appName,
    facility,
  };
}

/** An organization's Splunk HEC and syslog targets (docs/siem.md). */
export function createSiemTargetService(deps: {
  db: Kysely<Database>;
  engine: Engine;
  clock: Clock;
  keys: KeyRing;
  refuseIfReferenced: RefuseIfReferenced;
}) {
  const { db, clock, keys } = deps;

  const find = (orgId: number, id: number) =>
    db.selectFrom('siem_targets').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
  async function row(orgId: number, id: number) {
    const found = await find(orgId, id);
    if (!found) throw notFound('SIEM target');
    return found;
  }

  function columns(input: SiemTargetInput, existing?: SiemTargetRow) {
    const name = input.name.trim();
    if (!name) throw validationError('name', 'must not be empty');
    const perKind = input.kind === 'splunk_hec' ? hecColumns(input, keys, existing) : syslogColumns(input);
    return {
      name,
      kind: input.kind,
      ...perKind,
      verify_tls: input.verify_tls === false ? 0 : 1,
      ca_pem: checkedCa(input.ca_pem),
      updated_at: clock.now().getTime(),
    };
  }

  return {
    row,
    async list(orgId: number, page: { offset: number; limit: number }) {
      const base = db.selectFrom('siem_targets').where('org_id', '=', orgId);
      const { total } = await base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow();
      const rows = await base.selectAll().orderBy('id').offset(page.offset).limit(page.limit).execute();
      return { results: rows.map(siemTargetView), total: Number(total) };
    },
    get: async (orgId: number, id: number) => siemTargetView(await row(orgId, id)),
    async create(orgId: number, input: SiemTargetInput) {
      const values = columns(input);
      return db.transaction().execute(async (tx) => {
        // The organization row locked: two creates at once cannot both pass the limit.
        if (deps.engine === 'postgres')
          await sql`select id from organizations where id = ${orgId} for update`.execute(tx);
        const { n } = await tx
          .selectFrom('siem_targets')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('org_id', '=', orgId)
          .executeTakeFirstOrThrow();
        if (Number(n) >= MAX_SIEM_TARGETS)
          throw validationError('siem_target', `an organization can have at most ${MAX_SIEM_TARGETS} SIEM targets`);
        const created = await tx
          .insertInto('siem_targets')
          .values({ ...values, org_id: orgId, created_at: values.updated_at })
          .returningAll()
          .executeTakeFirstOrThrow();
        return siemTargetView(created);
      });
    },
    async update(orgId: number, id: number, input: SiemTargetInput) {
      const values = columns(input, await row(orgId, id));
      const updated = await db
        .updateTable('siem_targets')
        .set(values)
        .where('org_id', '=', orgId)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst();
      if (!updated) throw notFound('SIEM target');
      return siemTargetView(updated);
    },
    async delete(orgId: number, id: number) {
      await db.transaction().execute(async (tx) => {
        const found = await tx
          .selectFrom('siem_targets')
          .select('id')
          .where('org_id', '=', orgId)
          .where('id', '=', id)
          .executeTakeFirst();
        if (!found) throw notFound('SIEM target');
        await deps.refuseIfReferenced(orgId, 'siem_target', id, tx);
        // Only deleted rules can still name it (their snapshot keeps the id).
        await tx.deleteFrom('alert_rule_siem_targets').where('target_id', '=', id).execute();
        await tx.deleteFrom('siem_targets').where('id', '=', id).execute();
      });
    },
    /** The organization's targets a rule sends to. */
    ofRule: (orgId: number, ruleId: number) =>
      db
        .selectFrom('siem_targets')
        .selectAll()
        .where('org_id', '=', orgId)
        .where('id', 'in', db.selectFrom('alert_rule_siem_targets').select('target_id').where('rule_id', '=', ruleId))
        .orderBy('id')
        .execute(),
  };
}

export type SiemTargetService = ReturnType<typeof createSiemTargetService>;
