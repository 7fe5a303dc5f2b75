import { sql, type Kysely, type Selectable } from 'kysely';
import type { SystemSenderConfig } from '../../config.ts';
import type { Database, SenderTable } from '../../db/schema.ts';
import type { Clock } from '../../lib/clock.ts';
import type { KeyRing } from '../../lib/crypto.ts';
import { AppError, validationError } from '../../lib/errors.ts';
import { normalizeEmail } from '../orgs/index.ts';
import type { DefaultableStore } from './defaultable-store.ts';
import type { RefuseIfReferenced } from './delivery-references.ts';
import type { SmtpAccount } from './email/email-transport.ts';
import { bool, iso } from './row-values.ts';

export type SenderRow = Selectable<SenderTable>;

export interface SenderInput {
  email: string;
  server_host: string;
  port: number;
  username?: string | null;
  password?: string | null;
  encryption_method: 'SSL' | 'TLS';
  authentication_required?: boolean;
  is_default?: boolean;
}

/** What the email transport needs of a sender, its sealed credentials opened. */
export function smtpAccount(keys: KeyRing, row: SenderRow): SmtpAccount {
  return {
    from: row.email,
    host: row.server_host,
    port: Number(row.port),
    encryption: row.encryption_method as 'SSL' | 'TLS',
    authenticationRequired: bool(row.authentication_required),
    username: row.username_sealed ? keys.decryptSecret(row.username_sealed) : null,
    password: row.password_sealed ? keys.decryptSecret(row.password_sealed) : null,
    operatorSet: bool(row.is_system_created),
  };
}

/** The SMTP accounts email goes out through: an organization's own, and the operator's system sender. */
export function createSenderService(deps: {
  db: Kysely<Database>;
  clock: Clock;
  keys: KeyRing;
  store: DefaultableStore<SenderRow>;
  refuseIfReferenced: RefuseIfReferenced;
}) {
  const { db, clock, keys, store: senders, refuseIfReferenced } = deps;

  // Write-only fields (credentials) never leave this module.
  const senderView = async (orgId: number, row: SenderRow) => ({
    id: Number(row.id),
    email: row.email,
    server_host: row.server_host,
    encryption_method: row.encryption_method as 'SSL' | 'TLS',
    authentication_required: bool(row.authentication_required),
    // The system sender is the default of an organization that has no sender of its own.
    is_default: row.org_id === null ? !(await senders.findDefault(orgId)) : bool(row.is_default),
    is_system_created: bool(row.is_system_created),
    created_at: iso(row.created_at),
  });

  return {
    async list(orgId: number, page: { offset: number; limit: number }) {
      const { rows, total } = await senders.list(orgId, page);
      return { results: await Promise.all(rows.map((row) => senderView(orgId, row))), total };
    },
    get: async (orgId: number, id: number) => senderView(orgId, await senders.get(orgId, id)),
    async create(orgId: number, input: SenderInput) {
      const authenticationRequired = input.authentication_required ?? true;
      if (authenticationRequired && !input.username)
        throw validationError('username', 'is required when authentication_required is true');
      if (authenticationRequired && !input.password)
        throw validationError('password', 'is required when authentication_required is true');
      const row = await senders.create(
        orgId,
        {
          email: normalizeEmail(input.email),
          server_host: input.server_host.trim(),
          port: input.port,
          username_sealed: input.username ? keys.encryptSecret(input.username) : null,
          password_sealed: input.password ? keys.encryptSecret(input.password) : null,
          encryption_method: input.encryption_method,
          authentication_required: authenticationRequired ? 1 : 0,
          is_system_created: 0,
        },
        input.is_default,
      );
      return senderView(orgId, row);
    },
    delete: (orgId: number, id: number) =>
      senders.delete(orgId, id, async (row, tx) => {
        if (bool(row.is_system_created)) throw new AppError('forbidden', 'the system sender cannot be deleted');
        await refuseIfReferenced(orgId, 'sender', id, tx);
      }),

    /** The organization's default sender, else the system sender, else none. */
    async defaultRow(orgId: number): Promise<SenderRow | undefined> {
      return (
        (await senders.findDefault(orgId)) ??
        (await db.selectFrom('senders').selectAll().where('org_id', 'is', null).executeTakeFirst())
      );
    },

    /** The operator's system sender (DRAGNET_SYSTEM_SMTP_URL), kept in step at start-up. */
    async syncSystemSender(config: SystemSenderConfig | undefined) {
      if (!config) return;
      const values = {
        email: config.from,
        server_host: config.host,
        port: config.port,
        username_sealed: config.username ? keys.encryptSecret(config.username) : null,
        password_sealed: config.password ? keys.encryptSecret(config.password) : null,
        encryption_method: config.encryption,
        authentication_required: config.username ? 1 : 0,
      };
      // One system sender (unique index, migration 0011): every process starting at once
      // writes the same row.
      await db
        .insertInto('senders')
        .values({ ...values, org_id: null, is_default: 0, is_system_created: 1, created_at: clock.now().getTime() })
        .onConflict((oc) =>
          oc
            .column('is_system_created')
            .where(sql<boolean>`is_system_created = 1`)
            .doUpdateSet(values),
        )
        .execute();
    },
  };
}
