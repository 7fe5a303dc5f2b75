import type { Generated, Kysely, Transaction } from 'kysely';
import { requireAuth, type AuthContext } from '../../http/auth.plugin.ts';
import type { Database } from '../../db/schema.ts';
import type { Clock } from '../../lib/clock.ts';
import type { AuditEventName } from './audit.schemas.ts';

interface AuditLogTable {
  id: Generated<number>;
  org_id: number;
  event: string;
  actor_user_id: number | null;
  actor_email: string | null;
  target_type: string;
  target_id: number;
  target_name: string | null;
  via: string;
  ip_address: string | null;
  details: string;
  created_at: number;
}

// A type alias, not an interface: withTables needs an index-signature-compatible type.
type AuditTables = { audit_log: AuditLogTable };

export type AuditDetails = Record<string, string | number | boolean | null>;

/** Who acted and from where: an HTTP request's user and address, or an operator's command. */
export interface AuditOrigin {
  /** The organization whose log gets the event: the one the request acts for, or the user's own. */
  orgId: number;
  /** null: an operator's `dragnet` command, or someone failing to log in. */
  actor: { id: number; email: string } | null;
  via: 'api' | 'cli';
  ip: string | null;
  /** The API key the request came with, if any: named in the entry's details. */
  apiKey?: { id: number; name: string };
}

export interface AuditRecord extends AuditOrigin {
  event: AuditEventName;
  target: {
    type: 'user' | 'sender' | 'webhook' | 'siem_target' | 'rule' | 'incident' | 'api_key';
    id: number;
    name: string | null;
  };
  details?: AuditDetails;
}

/** The origin of an event an authenticated request caused, logged in the organization it acts for. */
export function requestOrigin(request: { auth: AuthContext | null; ip: string }): AuditOrigin {
  const { user, orgId, apiKey } = requireAuth(request);
  const origin: AuditOrigin = { orgId, actor: { id: user.id, email: user.email }, via: 'api', ip: request.ip };
  return apiKey ? { ...origin, apiKey: { id: apiKey.id, name: apiKey.name } } : origin;
}

/** A user as the target of an event (named by email as it was then). */
export const userTarget = (user: { id: number; email: string }) => ({
  type: 'user' as const,
  id: user.id,
  name: user.email,
});

/** An operator's `dragnet` command acting on something of `orgId`. */
export const cliOrigin = (orgId: number): AuditOrigin => ({ orgId, actor: null, via: 'cli', ip: null });

/**
 * The organization's security log (docs/api.md "Audit log"). Callers pass only what the event
 * needs to be understood later (ids, names, hosts, a reason); a request body never goes in.
 */
export function createAuditLog(deps: { db: Kysely<Database>; clock: Clock }) {
  const db = deps.db.withTables<AuditTables>();
  const { clock } = deps;

  return {
    /** `tx`: written with the change it records, so neither is kept without the other. */
    async record(entry: AuditRecord, tx?: Transaction<Database>): Promise<void> {
      await (tx ? tx.withTables<AuditTables>() : db)
        .insertInto('audit_log')
        .values({
          org_id: entry.orgId,
          event: entry.event,
          actor_user_id: entry.actor?.id ?? null,
          actor_email: entry.actor?.email ?? null,
          target_type: entry.target.type,
          target_id: entry.target.id,
          target_name: entry.target.name,
          via: entry.via,
          ip_address: entry.ip,
          details: JSON.stringify(
            entry.apiKey
              ? { ...entry.details, api_key_id: entry.apiKey.id, api_key: entry.apiKey.name }
              : (entry.details ?? {}),
          ),
          created_at: clock.now().getTime(),
        })
        .execute();
    },

    /** One organization's events, newest first. */
    async list(orgId: number, filter: { event?: string; offset: number; limit: number }) {
      let query = db.selectFrom('audit_log').where('org_id', '=', orgId);
      if (filter.event !== undefined) query = query.where('event', '=', filter.event);
      const [{ total }, rows] = await Promise.all([
        query.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
        query.selectAll().orderBy('id', 'desc').offset(filter.offset).limit(filter.limit).execute(),
      ]);
      const results = rows.map((row) => ({
        id: Number(row.id),
        event: row.event,
        created_at: new Date(Number(row.created_at)).toISOString(),
        actor_user_id: row.actor_user_id === null ? null : Number(row.actor_user_id),
        actor_email: row.actor_email,
        target_type: row.target_type,
        target_id: Number(row.target_id),
        target_name: row.target_name,
        via: row.via,
        ip_address: row.ip_address,
        details: JSON.parse(row.details) as AuditDetails,
      }));
      return { results, total: Number(total) };
    },
  };
}

export type AuditLog = ReturnType<typeof createAuditLog>;
