import { randomBytes } from 'node:crypto';
import type { Static } from '@sinclair/typebox';
import {
  API_KEY_PREFIX,
  type ApiKeyIdentity,
  type ApiKeyScope,
  type AuthenticatedUser,
} from '../../http/auth.plugin.ts';
import type { Clock } from '../../lib/clock.ts';
import type { KeyRing } from '../../lib/crypto.ts';
import { AppError, conflict, isUniqueViolation, notFound, validationError } from '../../lib/errors.ts';
import { isoDate, isoDateOrNull } from '../../lib/iso-date.ts';
import type { BackgroundTasks } from '../../lib/log.ts';
import { chain, type MaybePromise } from '../../lib/maybe-promise.ts';
import type { AuditLog, AuditOrigin } from '../audit/index.ts';
import type { OrganizationService, UserRepository } from '../orgs/index.ts';
import type { ApiKey, ApiKeyCreateBody } from './api-key.schemas.ts';
import type { ApiKeyRepository, ApiKeyRow, ListedApiKey } from './api-key.repository.ts';

/** 32 random bytes: guessing is hopeless, so a fast keyed digest (not argon2) is right. */
const KEY_BYTES = 32;
/** How much of a key the list shows: the marker and 8 characters (48 of its 256 bits). */
const SHOWN_PREFIX_LENGTH = API_KEY_PREFIX.length + 8;
/** last_used_at is written at most this often per key (never once per request). */
const MARK_USED_EVERY_MS = 60_000;
/** `api_key.used` goes to the audit log at most this often per key, unless the address changes. */
const AUDIT_USE_EVERY_MS = 3_600_000;

/** Who manages keys: a person's session acting for an organization (the routes refuse keys). */
export interface KeyManager {
  origin: AuditOrigin;
  user: AuthenticatedUser;
}

const statusOf = (row: ApiKeyRow, now: number) =>
  row.revoked_at !== null ? 'revoked' : row.expires_at !== null && row.expires_at <= now ? 'expired' : 'active';

export function createApiKeyService(deps: {
  keys: Pick<KeyRing, 'digest'>;
  clock: Clock;
  repository: ApiKeyRepository;
  users: Pick<UserRepository, 'findById'>;
  organizations: Pick<OrganizationService, 'resolveActingOrg'>;
  audit: AuditLog;
  background: BackgroundTasks;
}) {
  const { keys, clock, repository, users, organizations, audit } = deps;
  /** The last time this process marked each key used: no write per request. */
  const markedAt = new Map<number, number>();

  const present = (row: ListedApiKey): Static<typeof ApiKey> => ({
    id: row.id,
    name: row.name,
    scope: row.scope,
    prefix: row.prefix,
    status: statusOf(row, clock.now().getTime()),
    created_at: isoDate(row.created_at),
    created_by: row.created_by_email,
    expires_at: isoDateOrNull(row.expires_at),
    last_used_at: isoDateOrNull(row.last_used_at),
    revoked_at: isoDateOrNull(row.revoked_at),
    revoked_by: row.revoked_by_email,
  });

  const target = (row: Pick<ApiKeyRow, 'id' | 'name'>) => ({ type: 'api_key' as const, id: row.id, name: row.name });

  function noteUse(row: ApiKeyRow, user: AuthenticatedUser, ip: string): void {
    const now = clock.now().getTime();
    const last = Math.max(markedAt.get(row.id) ?? 0, row.last_used_at ?? 0);
    if (now - last < MARK_USED_EVERY_MS) return;
    markedAt.set(row.id, now);
    deps.background.run('marking an API key used', async () => {
      if ((await repository.markUsed(row.id, now, ip, AUDIT_USE_EVERY_MS)) !== 'logged') return;
      await audit.record({
        orgId: row.org_id,
        actor: { id: user.id, email: user.email },
        via: 'api',
        ip,
        event: 'api_key.used',
        target: target(row),
        details: { prefix: row.prefix, scope: row.scope },
      });
    });
  }

  /** The creator, if it may still act for the key's organization (its own, or one it manages). */
  const creatorOf = (row: ApiKeyRow): MaybePromise<AuthenticatedUser> =>
    chain(users.findById(row.created_by), (user) => {
      if (!user || user.is_active !== 1)
        throw new AppError('unauthorized', "API key's creator is disabled or no longer exists");
      if (user.org_id === row.org_id) return user;
      return Promise.resolve(organizations.resolveActingOrg(user, row.org_id)).then(
        () => user,
        () => {
          throw new AppError('unauthorized', "API key's creator no longer belongs to the key's organization");
        },
      );
    });

  return {
    async create(manager: KeyManager, input: Static<typeof ApiKeyCreateBody>) {
      const now = clock.now().getTime();
      const expiresAt = input.expires_at ? Date.parse(input.expires_at) : null;
      if (expiresAt !== null && expiresAt <= now) throw validationError('expires_at', 'must be in the future');
      const key = API_KEY_PREFIX + randomBytes(KEY_BYTES).toString('base64url');
      const values = {
        org_id: manager.origin.orgId,
        created_by: manager.user.id,
        name: input.name,
        scope: input.scope ?? 'read',
        prefix: key.slice(0, SHOWN_PREFIX_LENGTH),
        key_digest: keys.digest(key),
        created_at: now,
        expires_at: expiresAt,
      };
      let id: number;
      try {
        id = await repository.insert(values);
      } catch (error) {
        if (isUniqueViolation(error)) throw conflict(`an unrevoked API key named "${input.name}" exists`);
        throw error;
      }
      await audit.record({
        ...manager.origin,
        event: 'api_key.created',
        target: target({ id, name: values.name }),
        details: { prefix: values.prefix, scope: values.scope, expires_at: isoDateOrNull(expiresAt) },
      });
      const created = await repository.get(manager.origin.orgId, id);
      if (!created) throw notFound('API key');
      return { ...present(created), key };
    },

    async list(orgId: number, page: { offset: number; limit: number }) {
      const { results, total } = await repository.list(orgId, page);
      return { results: results.map(present), total };
    },

    /** Idempotent: revoking a revoked key answers it as it is, and logs nothing again. */
    async revoke(manager: KeyManager, id: number) {
      const orgId = manager.origin.orgId;
      const existing = await repository.get(orgId, id);
      if (!existing) throw notFound('API key');
      if (await repository.revoke(orgId, id, manager.user.id, clock.now().getTime())) {
        await audit.record({
          ...manager.origin,
          event: 'api_key.revoked',
          target: target(existing),
          details: { prefix: existing.prefix, scope: existing.scope },
        });
      }
      const revoked = await repository.get(orgId, id);
      if (!revoked) throw notFound('API key');
      return present(revoked);
    },

    /**
     * Runs on every request a key makes: synchronous while the key and its creator are cached
     * (db/read-cache.ts), as an access token's check is.
     */
    authenticateApiKey(
      key: string,
      clientAddress: string,
    ): MaybePromise<{ user: AuthenticatedUser; orgId: number; apiKey: ApiKeyIdentity }> {
      return chain(repository.findByDigest(keys.digest(key)), (row) => {
        if (!row) throw new AppError('unauthorized', 'invalid API key');
        if (row.revoked_at !== null) throw new AppError('unauthorized', 'API key has been revoked');
        if (row.expires_at !== null && row.expires_at <= clock.now().getTime())
          throw new AppError('unauthorized', 'API key has expired');
        return chain(creatorOf(row), (user) => {
          noteUse(row, user, clientAddress);
          return { user, orgId: row.org_id, apiKey: { id: row.id, name: row.name, scope: row.scope as ApiKeyScope } };
        });
      });
    },
  };
}

export type ApiKeyService = ReturnType<typeof createApiKeyService>;
