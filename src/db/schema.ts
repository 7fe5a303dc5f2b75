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

export interface RateCounterTable {
  key: string;
  count: number;
  expires_at: number;
}

export interface RateLimitOverrideTable {
  org_id: number;
  scope: string;
  period: string;
  limit_value: number | null;
}

export interface DefaultableRow {
  id: Generated<number>;
  org_id: number;
  is_default: Generated<number>;
  created_at: number;
}

export interface RecipientTable extends DefaultableRow {
  email: string;
}

export interface SenderTable extends Omit<DefaultableRow, 'org_id'> {
  org_id: number | null;
  email: string;
  server_host: string;
  port: number;
  username_sealed: string | null;
  password_sealed: string | null;
  encryption_method: string;
  authentication_required: number;
  is_system_created: Generated<number>;
}

export interface EmailTemplateTable extends DefaultableRow {
  name: string;
  subject: string;
  body: string;
  updated_at: number;
}

export interface WebhookTable extends DefaultableRow {
  name: string;
  url: string;
  /** JSON object of header name to value. */
  headers: string;
  secret_sealed: string;
  updated_at: number;
}

export interface DeliveryAttemptTable {
  id: Generated<number>;
  org_id: number;
  channel: string;
  target: string;
  purpose: string;
  status: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  rule_id: number | null;
  match_id: number | null;
  created_at: number;
}

export interface Database extends MessengerTables {
  recipients: RecipientTable;
  senders: SenderTable;
  email_templates: EmailTemplateTable;
  webhooks: WebhookTable;
  delivery_attempts: DeliveryAttemptTable;
  rate_counters: RateCounterTable;
  rate_limit_overrides: RateLimitOverrideTable;
  organizations: OrganizationTable;
  users: UserTable;
  backup_codes: BackupCodeTable;
  auth_failures: AuthFailureTable;
}

export interface CategoryTable {
  id: Generated<number>;
  name: string;
  created_at: number;
}

export interface ChannelTable {
  id: Generated<number>;
  platform: string;
  channel_key: string;
  platform_id: string | null;
  username: string | null;
  title: string;
  search_name: string;
  category_id: number | null;
  is_active: Generated<number>;
  last_scraped_at: number | null;
  total_messages_scraped: Generated<number>;
  created_at: number;
}

export interface MessageTable {
  id: Generated<number>;
  channel_id: number;
  message_id: number;
  user_id: number | null;
  text: string;
  text_folded: string;
  text_hash: string;
  date: number;
  has_media: Generated<number>;
  media_type: string | null;
  file_name: string | null;
  /** JSON array of URLs, or null. */
  links: string | null;
}

export interface SearchHistoryTable {
  id: Generated<number>;
  org_id: number;
  user_id: number | null;
  query: string;
  parsed_query: string;
  options: string;
  total_matches: number;
  channels_matched: number;
  snapshot_count: number;
  watermark_message_id: number;
  searched_at: number;
}

export interface SearchHistoryResultTable {
  history_id: number;
  rank: number;
  message_id: number;
}

export interface MessengerTables {
  categories: CategoryTable;
  channels: ChannelTable;
  messages: MessageTable;
  search_history: SearchHistoryTable;
  search_history_results: SearchHistoryResultTable;
}
