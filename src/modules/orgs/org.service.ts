import type { Clock } from '../../lib/clock.ts';
import { conflict, isUniqueViolation, notFound, validationError } from '../../lib/errors.ts';
import { frequencies, isFrequency } from '../../lib/frequency.ts';
import { chain, type MaybePromise } from '../../lib/maybe-promise.ts';
import { createActingOrgResolver } from './acting-org.ts';
import type { OrganizationChanges, OrganizationRepository, OrganizationRow } from './org.repository.ts';
import type { UserRow } from './user.repository.ts';

export interface OrganizationView {
  id: number;
  name: string;
  alert_rule_limit: number;
  used_credits: number;
  default_frequency: string;
  dashboard_url: string;
  managed_by_org_id: number | null;
  created_at: string;
}

export interface OrganizationSettings {
  alertRuleLimit?: number;
  defaultFrequency?: string;
  /** null clears an override and falls back to the operator default. */
  dashboardUrl?: string | null;
  /** Name of the managing MSSP organization; null detaches. */
  managedBy?: string | null;
  rename?: string;
}

const NAME_MAX = 200;

export function createOrganizationService(deps: {
  organizations: OrganizationRepository;
  clock: Clock;
  defaults: { alertRuleLimit: number; dashboardUrl: string };
}) {
  const { organizations, clock, defaults } = deps;
  const actingOrg = createActingOrgResolver({ organizations });

  const toView = (row: OrganizationRow): OrganizationView => ({
    id: row.id,
    name: row.name,
    alert_rule_limit: row.alert_rule_limit,
    used_credits: row.used_credits,
    default_frequency: row.default_frequency,
    dashboard_url: row.dashboard_url ?? defaults.dashboardUrl,
    managed_by_org_id: row.managed_by_org_id,
    created_at: new Date(row.created_at).toISOString(),
  });

  const checkedName = (raw: string): string => {
    const name = raw.trim();
    if (!name) throw validationError('name', 'must not be empty');
    if (name.length > NAME_MAX) throw validationError('name', `must be at most ${NAME_MAX} characters`);
    return name;
  };

  const requireById = (id: number): MaybePromise<OrganizationRow> =>
    chain(organizations.findById(id), (row) => {
      if (!row) throw notFound('organization');
      return row;
    });

  const requireByName = async (name: string): Promise<OrganizationRow> => {
    const row = await organizations.findByName(name.trim());
    if (!row) throw notFound(`organization "${name}"`);
    return row;
  };

  async function resolveChanges(
    current: OrganizationRow | undefined,
    settings: OrganizationSettings,
  ): Promise<OrganizationChanges> {
    const changes: OrganizationChanges = {};
    if (settings.rename !== undefined) changes.name = checkedName(settings.rename);
    if (settings.alertRuleLimit !== undefined) {
      if (!Number.isInteger(settings.alertRuleLimit) || settings.alertRuleLimit < 0) {
        throw validationError('alert_rule_limit', 'must be a whole number >= 0');
      }
      changes.alert_rule_limit = settings.alertRuleLimit;
    }
    if (settings.defaultFrequency !== undefined) {
      if (!isFrequency(settings.defaultFrequency)) {
        throw validationError('default_frequency', `must be one of ${frequencies.join(', ')}`);
      }
      changes.default_frequency = settings.defaultFrequency;
    }
    if (settings.dashboardUrl !== undefined) {
      if (settings.dashboardUrl !== null && !/^https?:\/\/\S+$/.test(settings.dashboardUrl)) {
        throw validationError('dashboard_url', 'must be an http(s) URL');
      }
      changes.dashboard_url = settings.dashboardUrl?.replace(/\/+$/, '') ?? null;
    }
    if (settings.managedBy !== undefined) {
      if (settings.managedBy === null) {
        changes.managed_by_org_id = null;
      } else {
        const manager = await requireByName(settings.managedBy);
        if (current && manager.id === current.id) {
          throw validationError('managed_by', 'an organization cannot manage itself');
        }
        if (manager.managed_by_org_id !== null) {
          throw validationError('managed_by', `"${manager.name}" is itself managed; MSSPs are one level deep`);
        }
        changes.managed_by_org_id = manager.id;
      }
    }
    return changes;
  }

  const newOrganization = (name: string, changes: OrganizationChanges) => ({
    name: checkedName(name),
    alert_rule_limit: changes.alert_rule_limit ?? defaults.alertRuleLimit,
    default_frequency: changes.default_frequency ?? 'daily',
    dashboard_url: changes.dashboard_url ?? null,
    managed_by_org_id: changes.managed_by_org_id ?? null,
    now: clock.now().getTime(),
  });

  return {
    toView,

    async create(name: string, settings: OrganizationSettings = {}): Promise<OrganizationView> {
      const changes = await resolveChanges(undefined, settings);
      try {
        return toView(await organizations.insert(newOrganization(name, changes)));
      } catch (error) {
        if (isUniqueViolation(error)) throw conflict(`organization "${name.trim()}" already exists`);
        throw error;
      }
    },

    /** The named organization, created with defaults when missing (for `user create --org`). */
    async ensure(name: string): Promise<OrganizationRow> {
      const existing = await organizations.findByName(name.trim());
      if (existing) return existing;
      await organizations.insertIfMissing(newOrganization(name, {}));
      return requireByName(name);
    },

    async update(name: string, settings: OrganizationSettings): Promise<OrganizationView> {
      const current = await requireByName(name);
      const changes = await resolveChanges(current, settings);
      try {
        return toView(await organizations.update(current.id, changes, clock.now().getTime()));
      } catch (error) {
        if (isUniqueViolation(error)) throw conflict(`organization "${changes.name}" already exists`);
        throw error;
      }
    },

    list: async () => (await organizations.list()).map(toView),

    showByName: async (name: string) => toView(await requireByName(name)),

    requireByName,

    /** A cached organization comes back as the value itself (lib/maybe-promise.ts). */
    get: (id: number): MaybePromise<OrganizationView> => chain(requireById(id), toView),

    /** Its name only (the account view's): no view built, no date formatted. */
    nameOf: (id: number): MaybePromise<string> => chain(requireById(id), (row) => row.name),

    resolveActingOrg: actingOrg.resolveActingOrg,

    listVisible: async (user: Pick<UserRow, 'org_id' | 'role'>): Promise<OrganizationView[]> =>
      (await actingOrg.visibleOrganizations(user)).map(toView),
  };
}

export type OrganizationService = ReturnType<typeof createOrganizationService>;
