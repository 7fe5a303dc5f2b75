import {
  chmodSync,
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { randomBytes, createHash } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ipaddr from 'ipaddr.js';
import { parseAllowList } from './lib/outbound/index.ts';

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  /** postgres://… for scale-out; absent means the embedded SQLite store in dataDir. */
  databaseUrl?: string;
  /** DRAGNET_DATABASE_READ_URLS: streaming standbys of databaseUrl where searches read; empty without. */
  databaseReadUrls: string[];
  /** SQLite: how long a write waits for another process (an ingest) to release the write lock. */
  sqliteBusyTimeoutMs: number;
  /** PostgreSQL statement timeouts of a search and of one rule run's queries. */
  searchTimeoutMs: number;
  ruleRunTimeoutMs: number;
  /** DRAGNET_PG_PREPARED=off: no named prepared statements (a pooler in transaction mode that drops them). */
  pgPreparedStatements: boolean;
  /** redis://… : rate-limit counts shared by several API processes. */
  redisUrl?: string;
  /** Off only for measuring the limiter's own cost (bench). */
  rateLimitsEnabled: boolean;
  masterKey: Buffer;
  /**
   * Second key of the card store's digests (PAN, sighting), kept out of backups so that an
   * archive with secret.key still cannot confirm a guessed card number (docs/operations.md).
   */
  cardHashKey: Buffer;
  logLevel: string;
  /**
   * Whose X-Forwarded-For to believe (Fastify's trustProxy): false, true (every hop, so only
   * where nothing but the proxy can reach Dragnet), or the proxies' addresses/CIDRs.
   */
  trustProxy: boolean | string[];
  /** When set, GET /metrics requires `Authorization: Bearer <token>`; else it answers loopback only. */
  metricsToken?: string;
  /** DRAGNET_DASHBOARD_URL: the base of notification links when an organization sets none. */
  dashboardUrl?: string;
  /** http://HOST:PORT: where `dragnet serve` listens, and the links' last resort. */
  serverUrl: string;
  /** The built dashboard (web/dist) the server serves at `/`. */
  dashboardDir: string;
  defaultAlertRuleLimit: number;
  bodyLimitBytes: number;
  delivery: DeliveryConfig;
  /**
   * DRAGNET_OUTBOUND_ALLOW_HOSTS (and its older name DRAGNET_WEBHOOK_ALLOW_HOSTS): hosts,
   * addresses and CIDRs, optionally with :port, that webhooks, senders and collectors may reach
   * although they are not public (src/lib/outbound).
   */
  outboundAllowHosts: string[];
  /**
   * DRAGNET_COLLECTOR_ALLOW_HOSTS: the same kind of entries, for the operator's collectors only
   * (which also reach what outboundAllowHosts allows): an internal feed listed here stays out of
   * reach of the tenants' webhooks and senders.
   */
  collectorAllowHosts: string[];
  schedulerPollMs: number;
  /** How often a process that claims work tells the store it is alive (src/jobs/worker-presence.ts). */
  workerHeartbeatMs: number;
  /** The collectors file (docs/collectors.md); absent means every collector at its default. */
  collectorsFile: string;
  /** Largest body `POST /ingest/<source>/` takes. */
  ingestMaxBytes: number;
  /** How long a client may take to send a request (docs/api.md "Slow requests"). */
  requestDeadlines: RequestDeadlines;
  /** Days a search stays in the search history; 0 keeps it forever. */
  searchHistoryRetentionDays: number;
  loginThrottle: {
    windowSeconds: number;
    maxFailuresPerAccount: number;
    maxFailuresPerAddress: number;
    maxAddressDelaySeconds: number;
  };
}

export interface RequestDeadlines {
  /** The request line and headers must arrive within this. */
  headersMs: number;
  /** A body a route reads whole (JSON) must arrive within this, counted from its headers. */
  bodyMs: number;
  /** A streamed body (POST /ingest/) must bring this many bytes a second, over every `bodyMs`. */
  streamMinBytesPerSecond: number;
}

/** The operator's system sender (DRAGNET_SYSTEM_SMTP_URL), kept in step with the store at start-up. */
export interface SystemSenderConfig {
  from: string;
  host: string;
  port: number;
  encryption: 'SSL' | 'TLS';
  username: string | null;
  password: string | null;
}

/** How email is sent (modules/delivery's email transport). */
export interface SmtpConfig {
  timeoutMs: number;
  /** Trust self-signed SMTP certificates (DRAGNET_SMTP_ALLOW_SELF_SIGNED, for test servers). */
  allowSelfSigned: boolean;
  /** Extra trusted CA in PEM (DRAGNET_SMTP_CA_FILE). */
  ca?: string;
}

export interface DeliveryConfig {
  systemSender?: SystemSenderConfig;
  webhookTimeoutMs: number;
  smtp: SmtpConfig;
}

export type Env = Record<string, string | undefined>;

/** The card hash key's file in the data folder; backups leave it out (DATA_FILES in src/db/backup.ts). */
const CARD_HASH_KEY_FILE = 'card-hash.key';

function integer(env: Env, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) {
    throw new Error(`${name} must be an integer >= ${min}, got "${raw}"`);
  }
  return value;
}

/**
 * A key from an environment variable (any text of 32+ characters, hashed to 32 bytes; several
 * processes sharing one PostgreSQL must share it), otherwise from a file of the data folder,
 * made on first use.
 */
function loadKey(env: Env, variable: string, keyFile: string): Buffer {
  const fromEnv = env[variable];
  if (fromEnv) {
    if (fromEnv.length < 32) throw new Error(`${variable} must be at least 32 characters`);
    return createHash('sha256').update(fromEnv).digest();
  }
  if (!existsSync(keyFile)) {
    // Written whole beside it, then linked into place: a process starting at the same moment
    // either finds no file or the whole key, never the empty file an exclusive create leaves
    // before its write lands.
    const draft = `${keyFile}.${process.pid}.${randomBytes(4).toString('hex')}`;
    writeFileSync(draft, randomBytes(32).toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
    try {
      linkSync(draft, keyFile);
    } catch (error) {
      // Another process (the CLI beside a starting server) created it first: use theirs.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      unlinkSync(draft);
    }
  }
  const key = Buffer.from(readFileSync(keyFile, 'utf8').trim(), 'base64');
  if (key.length !== 32) throw new Error(`${keyFile} does not hold a 32-byte base64 key`);
  return key;
}

/** Makes every file and folder below `folder` readable by its owner only. */
function restrictTree(folder: string) {
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const file = path.join(folder, entry.name);
    if (entry.isDirectory()) {
      chmodSync(file, 0o700);
      restrictTree(file);
    } else if (entry.isFile()) {
      chmodSync(file, 0o600);
    }
  }
}

/**
 * The data folder holds the keys, the store and raw leak files: only its owner may enter it.
 * A folder made by an older version (0755, files 0644) is corrected once, file by file; after
 * that the folder's own 0700 is the whole check, so a start never walks the raw leak files.
 */
export function privateDataDir(dataDir: string): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  if ((statSync(dataDir).mode & 0o077) === 0) return;
  restrictTree(dataDir);
  chmodSync(dataDir, 0o700);
}

/**
 * DRAGNET_SYSTEM_SMTP_URL: smtp://user:password@host:port?from=alerts@example.com&encryption=TLS
 * (encryption TLS by default; SSL means plaintext, as in spec 2.6).
 */
function systemSender(raw: string | undefined): SystemSenderConfig | undefined {
  if (!raw) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error('DRAGNET_SYSTEM_SMTP_URL must be a URL like smtp://user:pass@host:587?from=alerts@example.com');
  }
  if (url.protocol !== 'smtp:') throw new Error('DRAGNET_SYSTEM_SMTP_URL must start with smtp://');
  const encryption = (url.searchParams.get('encryption') ?? 'TLS').toUpperCase();
  if (encryption !== 'TLS' && encryption !== 'SSL')
    throw new Error('DRAGNET_SYSTEM_SMTP_URL encryption must be TLS or SSL');
  const from = url.searchParams.get('from') ?? (url.username ? decodeURIComponent(url.username) : '');
  if (!from.includes('@')) throw new Error('DRAGNET_SYSTEM_SMTP_URL needs ?from=<address>');
  return {
    from,
    host: url.hostname,
    port: url.port ? Number(url.port) : 587,
    encryption,
    username: url.username ? decodeURIComponent(url.username) : null,
    password: url.password ? decodeURIComponent(url.password) : null,
  };
}

/** The address ranges proxy-addr (Fastify's trustProxy) knows by name. */
const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/**
 * DRAGNET_TRUST_PROXY: true/false, or comma-separated proxy addresses, CIDRs or range names
 * (`loopback`). With addresses, the client is the last address in X-Forwarded-For that is not a
 * trusted proxy, so a client cannot pose as another by sending the header itself.
 */
function trustProxy(raw: string | undefined): Config['trustProxy'] {
  const value = (raw ?? '').trim();
  if (value === '' || value === 'false') return false;
  if (value === 'true') return true;
  const entries = value
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
  for (const entry of entries) {
    const valid =
      PROXY_RANGE_NAMES.includes(entry) || (entry.includes('/') ? ipaddr.isValidCIDR(entry) : ipaddr.isValid(entry));
    if (!valid)
      throw new Error(
        `DRAGNET_TRUST_PROXY must be true, false, or proxy addresses, CIDRs or "loopback", got "${entry}"`,
      );
  }
  return entries;
}

function metricsToken(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  if (raw.length < 16) throw new Error('DRAGNET_METRICS_TOKEN must be at least 16 characters');
  return raw;
}

/** The variables' entries, checked now so a typo stops the start instead of refusing at send time. */
function allowHosts(env: Env, names: string[]): string[] {
  const entries: string[] = [];
  for (const name of names) {
    const list = (env[name] ?? '')
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean);
    try {
      parseAllowList(list);
    } catch (error) {
      throw new Error(`${name}: ${(error as Error).message}`);
    }
    entries.push(...list);
  }
  return entries;
}

/**
 * DRAGNET_DATABASE_READ_URLS: comma-separated postgres:// URLs of streaming standbys of
 * DRAGNET_DATABASE_URL. Refused without DRAGNET_DATABASE_URL: the embedded store has no replicas.
 * Messages name an entry by its position, never its text (it may hold a password).
 */
function readUrls(value: string | undefined, databaseUrl: string | undefined): string[] {
  const urls = (value ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  if (urls.length === 0) return [];
  if (!databaseUrl) {
    throw new Error(
      'DRAGNET_DATABASE_READ_URLS needs DRAGNET_DATABASE_URL: read replicas are streaming standbys of a PostgreSQL primary, and the embedded store has none',
    );
  }
  urls.forEach((url, i) => {
    let valid = /^postgres(ql)?:\/\//.test(url);
    if (valid) {
      try {
        valid = new URL(url).hostname !== '';
      } catch {
        valid = false;
      }
    }
    if (!valid) {
      throw new Error(
        `DRAGNET_DATABASE_READ_URLS must be comma-separated postgres:// URLs: entry ${i + 1} of ${urls.length} is not one`,
      );
    }
  });
  return urls;
}

/** The URL of a server listening on host:port, as a browser on that machine reaches it. */
export function serverUrl(host: string, port: number): string {
  const reachable = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`;
}

export function loadConfig(env: Env = process.env): Config {
  const host = env.HOST || '127.0.0.1';
  const port = integer(env, 'PORT', 8080);
  const dataDir = path.resolve(env.DRAGNET_DATA_DIR || 'data');
  const databaseUrl = env.DRAGNET_DATABASE_URL || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new Error('DRAGNET_DATABASE_URL must be a postgres:// URL');
  }
  const databaseReadUrls = readUrls(env.DRAGNET_DATABASE_READ_URLS, databaseUrl);
  privateDataDir(dataDir);
  return {
    host,
    port,
    dataDir,
    databaseUrl,
    databaseReadUrls,
    sqliteBusyTimeoutMs: integer(env, 'DRAGNET_SQLITE_BUSY_TIMEOUT_MS', 10_000, 1),
    searchTimeoutMs: integer(env, 'DRAGNET_SEARCH_TIMEOUT_MS', 30_000, 1),
    ruleRunTimeoutMs: integer(env, 'DRAGNET_RULE_RUN_TIMEOUT_MS', 120_000, 1),
    pgPreparedStatements: env.DRAGNET_PG_PREPARED !== 'off',
    redisUrl: env.DRAGNET_REDIS_URL || undefined,
    rateLimitsEnabled: env.DRAGNET_RATE_LIMITS !== 'off',
    masterKey: loadKey(env, 'DRAGNET_SECRET_KEY', path.join(dataDir, 'secret.key')),
    cardHashKey: loadKey(env, 'DRAGNET_CARD_HASH_KEY', path.join(dataDir, CARD_HASH_KEY_FILE)),
    logLevel: env.DRAGNET_LOG_LEVEL || 'info',
    trustProxy: trustProxy(env.DRAGNET_TRUST_PROXY),
    metricsToken: metricsToken(env.DRAGNET_METRICS_TOKEN),
    dashboardUrl: env.DRAGNET_DASHBOARD_URL?.replace(/\/+$/, '') || undefined,
    serverUrl: serverUrl(host, port),
    dashboardDir: env.DRAGNET_DASHBOARD_DIR
      ? path.resolve(env.DRAGNET_DASHBOARD_DIR)
      : fileURLToPath(new URL('../web/dist/', import.meta.url)),
    defaultAlertRuleLimit: integer(env, 'DRAGNET_DEFAULT_ALERT_RULE_LIMIT', 20, 1),
    bodyLimitBytes: integer(env, 'DRAGNET_BODY_LIMIT_BYTES', 1_048_576, 1024),
    delivery: {
      systemSender: systemSender(env.DRAGNET_SYSTEM_SMTP_URL),
      webhookTimeoutMs: integer(env, 'DRAGNET_WEBHOOK_TIMEOUT_MS', 30_000, 1),
      smtp: {
        timeoutMs: integer(env, 'DRAGNET_SMTP_TIMEOUT_MS', 30_000, 1),
        allowSelfSigned: env.DRAGNET_SMTP_ALLOW_SELF_SIGNED === 'true',
        ca: env.DRAGNET_SMTP_CA_FILE ? readFileSync(env.DRAGNET_SMTP_CA_FILE, 'utf8') : undefined,
      },
    },
    outboundAllowHosts: allowHosts(env, ['DRAGNET_OUTBOUND_ALLOW_HOSTS', 'DRAGNET_WEBHOOK_ALLOW_HOSTS']),
    collectorAllowHosts: allowHosts(env, ['DRAGNET_COLLECTOR_ALLOW_HOSTS']),
    schedulerPollMs: integer(env, 'DRAGNET_SCHEDULER_POLL_MS', 2000, 10),
    workerHeartbeatMs: integer(env, 'DRAGNET_WORKER_HEARTBEAT_MS', 5000, 10),
    collectorsFile: path.resolve(env.DRAGNET_COLLECTORS_FILE || path.join(dataDir, 'collectors.json')),
    ingestMaxBytes: integer(env, 'DRAGNET_INGEST_MAX_BYTES', 1024 ** 3, 1024),
    requestDeadlines: {
      headersMs: integer(env, 'DRAGNET_REQUEST_HEADERS_TIMEOUT_MS', 10_000, 1),
      bodyMs: integer(env, 'DRAGNET_REQUEST_BODY_TIMEOUT_MS', 30_000, 1),
      streamMinBytesPerSecond: integer(env, 'DRAGNET_INGEST_MIN_BYTES_PER_SECOND', 1024, 0),
    },
    searchHistoryRetentionDays: integer(env, 'DRAGNET_SEARCH_HISTORY_RETENTION_DAYS', 0, 0),
    loginThrottle: {
      windowSeconds: integer(env, 'DRAGNET_LOGIN_WINDOW_SECONDS', 900, 1),
      maxFailuresPerAccount: integer(env, 'DRAGNET_LOGIN_MAX_FAILURES_PER_ACCOUNT', 5, 1),
      maxFailuresPerAddress: integer(env, 'DRAGNET_LOGIN_MAX_FAILURES_PER_ADDRESS', 20, 1),
      maxAddressDelaySeconds: integer(env, 'DRAGNET_LOGIN_ADDRESS_MAX_DELAY_SECONDS', 30, 1),
    },
  };
}
