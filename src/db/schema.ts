import type { Generated } from 'kysely';

/**
 * One schema for both engines. Timestamps are epoch milliseconds and booleans 0/1 integers in
 * both, so rows read the same whichever engine served them and repositories convert once.
 */
export interface OrganizationTable {
  id: Generated<number>;
  name: string;
  alert_rule_limit: number;
  used_credits: Generated<number>;
  default_frequency: Generated<string>;
  dashboard_url: string | null;
  managed_by_org_id: number | null;
  created_at: number;
  updated_at: number;
}

export interface UserTable {
  id: Generated<number>;
  org_id: number;
  email: string;
  password_hash: string;
  role: string;
  is_active: Generated<number>;
  token_version: Generated<number>;
  totp_enabled: Generated<number>;
  totp_secret: string | null;
  totp_pending_secret: string | null;
  totp_last_step: number | null;
  password_changed_at: number;
  last_login_at: number | null;
  created_at: number;
}

export interface BackupCodeTable {
  id: Generated<number>;
  user_id: number;
  code_digest: string;
  used_at: number | null;
}

export interface AuthFailureTable {
  id: Generated<number>;
  scope: string;
  failed_at: number;
}

export interface Database {
  organizations: OrganizationTable;
  users: UserTable;
  backup_codes: BackupCodeTable;
  auth_failures: AuthFailureTable;
}
