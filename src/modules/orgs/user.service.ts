import type { Clock } from '../../lib/clock.ts';
import { conflict, isUniqueViolation, notFound, validationError } from '../../lib/errors.ts';
import { chain, type MaybePromise } from '../../lib/maybe-promise.ts';
import { assertPasswordStrength, hashPassword } from '../../lib/password.ts';
import type { OrganizationService } from './org.service.ts';
import type { UserRepository, UserRow } from './user.repository.ts';

export type UserRole = 'member' | 'system';

export interface UserView {
  id: number;
  email: string;
  org_id: number;
  organization: string;
  role: UserRole;
  is_active: boolean;
  two_factor_enabled: boolean;
  created_at: string;
  last_login_at: string | null;
}

// Deliberately loose: one "@", no spaces, a dot in the domain. Deliverability is the SMTP
// server's business; this only catches typos such as a missing domain.
const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function normalizeEmail(raw: string, field = 'email'): string {
  const email = raw.trim().toLowerCase();
  if (email.length > 254 || !EMAIL_PATTERN.test(email)) throw validationError(field, 'must be an email address');
  return email;
}

export function createUserService(deps: { users: UserRepository; organizations: OrganizationService; clock: Clock }) {
  const { users, organizations, clock } = deps;

  // The view of a row from the read cache (frozen, shared, replaced when the user changes) is
  // kept with it: GET /service/account/ would otherwise format two dates per request.
  const views = new WeakMap<UserRow, { organization: string; view: UserView }>();
  const buildView = (row: UserRow, organization: string): UserView => ({
    id: row.id,
    email: row.email,
    org_id: row.org_id,
    organization,
    role: row.role as UserRole,
    is_active: row.is_active === 1,
    two_factor_enabled: row.totp_enabled === 1,
    created_at: new Date(row.created_at).toISOString(),
    last_login_at: row.last_login_at === null ? null : new Date(row.last_login_at).toISOString(),
  });
  // Not async: with the user and organization cached, GET /service/account/ answers in the same tick.
  const toView = (row: UserRow): MaybePromise<UserView> =>
    chain(organizations.nameOf(row.org_id), (organization) => {
      if (!Object.isFrozen(row)) return buildView(row, organization);
      const known = views.get(row);
      if (known?.organization === organization) return { ...known.view };
      const view = buildView(row, organization);
      views.set(row, { organization, view });
      return { ...view };
    });

  const requireByEmail = async (rawEmail: string): Promise<UserRow> => {
    const row = await users.findByEmail(normalizeEmail(rawEmail));
    if (!row) throw notFound(`user ${rawEmail}`);
    return row;
  };

  return {
    toView,

    /** Creates the user, and its organization when none of that name exists yet. */
    async create(input: { orgName: string; email: string; password: string; role?: UserRole }): Promise<UserView> {
      const email = normalizeEmail(input.email);
      assertPasswordStrength(input.password, email);
      if (await users.findByEmail(email)) throw conflict(`user ${email} already exists`);
      const org = await organizations.ensure(input.orgName);
      try {
        const row = await users.insert({
          org_id: org.id,
          email,
          password_hash: await hashPassword(input.password),
          role: input.role ?? 'member',
          now: clock.now().getTime(),
        });
        return toView(row);
      } catch (error) {
        if (isUniqueViolation(error)) throw conflict(`user ${email} already exists`);
        throw error;
      }
    },

    async list(orgName?: string): Promise<UserView[]> {
      const orgId = orgName === undefined ? undefined : (await organizations.requireByName(orgName)).id;
      return Promise.all((await users.list(orgId)).map(toView));
    },

    /** Operator password reset; like a user's own change it revokes every earlier token. */
    async resetPassword(rawEmail: string, password: string): Promise<UserView> {
      const row = await requireByEmail(rawEmail);
      assertPasswordStrength(password, row.email);
      await users.update(row.id, {
        password_hash: await hashPassword(password),
        password_changed_at: clock.now().getTime(),
        token_version: row.token_version + 1,
      });
      return toView((await users.findById(row.id))!);
    },

    /** Operator recovery for a user who lost their authenticator and backup codes. */
    async disableTwoFactor(rawEmail: string): Promise<UserView> {
      const row = await requireByEmail(rawEmail);
      if (row.totp_enabled !== 1 && row.totp_pending_secret === null)
        throw conflict(`two-factor authentication is not enabled for ${row.email}`);
      await users.clearTwoFactor(row.id);
      return toView((await users.findById(row.id))!);
    },

    /** Disabling also bumps the token version, so the user's live tokens stop working at once. */
    async setActive(rawEmail: string, active: boolean): Promise<UserView> {
      const row = await requireByEmail(rawEmail);
      await users.update(row.id, {
        is_active: active ? 1 : 0,
        token_version: active ? row.token_version : row.token_version + 1,
      });
      return toView((await users.findById(row.id))!);
    },
  };
}

export type UserService = ReturnType<typeof createUserService>;
