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

export interface KnownLoginAddressTable {
  user_id: number;
  /** loginAddressKey(): an IPv4 address or an IPv6 /64. */
  address_key: string;
  last_success_at: number;
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
  /** JSON object of header name to value, sealed (KeyRing.encryptSecret): often the receiver's credentials. */
  headers_sealed: string;
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

export interface AlertRuleTable {
  id: Generated<number>;
  org_id: number;
  name: string;
  service_id: number;
  args: string;
  sender_id: number | null;
  email_template_id: number | null;
  webhook_id: number | null;
  frequency: string;
  total_alerts_count: Generated<number>;
  total_matches_count: Generated<number>;
  last_run: number | null;
  /** When the rule next falls due (last_run + its effective frequency); 0 before its first run. */
  due_at: Generated<number>;
  /** The window end the hourly tick last claimed the rule for, and the worker that claimed it. */
  tick_window: number | null;
  tick_claimed_by: string | null;
  is_deleted: Generated<number>;
  deleted_at: number | null;
  deleted_by: number | null;
  deletion_snapshot: string | null;
  /** 1 while the tick passes the rule over (its pause endpoint); who paused it and when. */
  is_paused: Generated<number>;
  paused_at: number | null;
  paused_by: number | null;
  /** The TLP 2.0 marking of the rule's findings in STIX and MISP exports (modules/cti): clear, green, amber, amber+strict, red. */
  tlp: Generated<string>;
  created_by: number | null;
  created_at: number;
  updated_at: number;
}

export interface AlertRuleRecipientTable {
  rule_id: number;
  recipient_id: number;
}

/** A Splunk HEC or syslog target of an organization's rules (migration 0020_siem_targets). */
export interface SiemTargetTable {
  id: Generated<number>;
  org_id: number;
  name: string;
  kind: string;
  url: string | null;
  /** The HEC token, sealed (KeyRing.encryptSecret); write-only. */
  token_sealed: string | null;
  hec_index: string | null;
  sourcetype: string | null;
  source: string | null;
  host: string | null;
  port: number | null;
  format: string | null;
  app_name: string | null;
  facility: number | null;
  verify_tls: number;
  ca_pem: string | null;
  created_at: number;
  updated_at: number;
}

export interface AlertRuleSiemTargetTable {
  rule_id: number;
  target_id: number;
}

export interface RuleRunTable {
  id: Generated<number>;
  org_id: number;
  rule_id: number;
  run_key: string;
  window_start: number | null;
  window_end: number;
  status: string;
  hits: Generated<number>;
  error: string | null;
  /** The worker running it (src/jobs/worker-presence.ts). */
  claimed_by: string | null;
  created_at: number;
  completed_at: number | null;
}

export interface MatchTable {
  id: Generated<number>;
  org_id: number;
  rule_id: number;
  run_id: number;
  status: string;
  total_hits: Generated<number>;
  stored_hits: Generated<number>;
  excluded_hits: Generated<number>;
  window_start: number | null;
  window_end: number;
  created_at: number;
  completed_at: number | null;
  /** JSON {done, total, unit} while an async source's job works on the match. */
  progress: string | null;
  /** The incident's state (docs/api.md "Incidents"): new, acknowledged, resolved, false_positive. */
  incident_status: Generated<string>;
  assignee_id: number | null;
  status_changed_at: number | null;
  status_changed_by: number | null;
}

/** What happened to an incident: a status or assignee change, or a note; who and when. */
export interface IncidentEventTable {
  id: Generated<number>;
  org_id: number;
  match_id: number;
  user_id: number | null;
  kind: string;
  from_value: string | null;
  to_value: string | null;
  note: string | null;
  created_at: number;
}

export interface MatchHitTable {
  id: Generated<number>;
  match_id: number;
  rule_id: number;
  hit_key: string;
  hit_date: number;
  data: string;
  is_excluded: Generated<number>;
}

export interface ExclusionTable {
  id: Generated<number>;
  org_id: number;
  rule_id: number;
  field: string;
  value: string;
  created_at: number;
}

export interface NotificationTable {
  id: Generated<number>;
  org_id: number;
  rule_id: number;
  match_id: number;
  channel: string;
  status: string;
  /** The worker sending it (src/jobs/worker-presence.ts). */
  claimed_by: string | null;
  created_at: number;
  sent_at: number | null;
}

export interface JobTable {
  id: Generated<number>;
  type: string;
  job_key: string;
  payload: string;
  status: string;
  attempts: Generated<number>;
  run_after: number;
  /** The worker running it (src/jobs/worker-presence.ts). */
  claimed_by: string | null;
  error: string | null;
  created_at: number;
  finished_at: number | null;
}

export interface CollectorStateTable {
  name: string;
  /** JSON of the collector's cursor. */
  cursor: string | null;
  next_run_at: number;
  claimed_until: number | null;
  runs: Generated<number>;
  consecutive_failures: Generated<number>;
  items_last_run: number | null;
  items_total: Generated<number>;
  last_run_at: number | null;
  last_success_at: number | null;
  last_error: string | null;
  last_error_at: number | null;
}

/** Processes that claim work, and when they were last seen (src/jobs/worker-presence.ts). */
export interface WorkerTable {
  id: string;
  pid: number;
  host: string;
  started_at: number;
  seen_at: number;
}

/** Settings a server shares with the store's other processes (src/modules/orgs/dashboard-address.ts). */
export interface ServerSettingTable {
  name: string;
  value: string;
  updated_at: number;
}

export interface Database extends MessengerTables {
  server_settings: ServerSettingTable;
  workers: WorkerTable;
  collector_state: CollectorStateTable;
  alert_rules: AlertRuleTable;
  alert_rule_recipients: AlertRuleRecipientTable;
  siem_targets: SiemTargetTable;
  alert_rule_siem_targets: AlertRuleSiemTargetTable;
  rule_runs: RuleRunTable;
  matches: MatchTable;
  match_hits: MatchHitTable;
  incident_events: IncidentEventTable;
  exclusions: ExclusionTable;
  notifications: NotificationTable;
  jobs: JobTable;
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
  known_login_addresses: KnownLoginAddressTable;
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
  /** The origin of a forwarded message, as the export names it (messenger/0007). */
  forwarded_from: string | null;
  /** The origin's id as the export writes it (`channel1234`, `user42`). */
  forwarded_from_id: string | null;
  via_bot: string | null;
  reply_to_message_id: number | null;
  /** When the message was last edited (epoch ms). */
  edited_at: number | null;
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
  /** Highest message id at search time: a re-read runs the query again below it (migration messenger/0003). */
  watermark_message_id: number;
  searched_at: number;
  /**
   * PostgreSQL with read replicas: the WAL position the watermark was read at; a re-read runs on
   * a replica only once it has replayed past it (migration messenger/0008). Absent on SQLite.
   */
  read_lsn?: string | null;
}

/** PostgreSQL only: the (channel, message id) of every message, unique (migration messenger/0005). */
export interface MessageKeyTable {
  channel_id: number;
  message_id: number;
}

/** PostgreSQL only: every distinct word of the folded texts, with an id (migration messenger/0009). */
export interface MessageLexiconTable {
  id: Generated<number>;
  word: string;
}

/** PostgreSQL only: each message's word ids, sorted (migration messenger/0009). */
export interface MessageWordsTable {
  id: number;
  channel_id: number;
  word_ids: number[];
}

/** PostgreSQL only: the words with a bitmap of their messages (migration messenger/0012). */
export interface MessageFrequentWordsTable {
  word_id: number;
}

/** PostgreSQL only: a frequent word's messages among 8,192 ids, one bit each (migration messenger/0012). */
export interface MessageWordBitsTable {
  word_id: number;
  block: number;
  bits: string;
}

/** PostgreSQL only: each channel's number of messages, moved by the writers' transactions (migration messenger/0013). */
export interface MessageChannelSizesTable {
  channel_id: number;
  messages: number;
}

/** PostgreSQL only: a frequent word's messages among 1,024 positions of a channel, one bit each (migration messenger/0013). */
export interface MessageChannelWordBitsTable {
  channel_id: number;
  word_id: number;
  block: number;
  bits: string;
}

export interface MessengerTables {
  categories: CategoryTable;
  channels: ChannelTable;
  messages: MessageTable;
  message_keys: MessageKeyTable;
  message_lexicon: MessageLexiconTable;
  message_words: MessageWordsTable;
  message_frequent_words: MessageFrequentWordsTable;
  message_word_bits: MessageWordBitsTable;
  message_channel_sizes: MessageChannelSizesTable;
  message_channel_word_bits: MessageChannelWordBitsTable;
  search_history: SearchHistoryTable;
}
