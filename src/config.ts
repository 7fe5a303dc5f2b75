import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes, createHash } from 'node:crypto';
import path from 'node:path';

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  /** postgres://… for scale-out; absent means the embedded SQLite store in dataDir. */
  databaseUrl?: string;
  /** redis://… : rate-limit counts shared by several API processes. */
  redisUrl?: string;
  /** Off only for measuring the limiter's own cost (bench). */
  rateLimitsEnabled: boolean;
  masterKey: Buffer;
  logLevel: string;
  trustProxy: boolean;
  dashboardUrl: string;
  defaultAlertRuleLimit: number;
  bodyLimitBytes: number;
  loginThrottle: {
    windowSeconds: number;
    maxFailuresPerAccount: number;
    maxFailuresPerAddress: number;
  };
}

export type Env = Record<string, string | undefined>;

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
 * The master key comes from DRAGNET_SECRET_KEY when set (several processes sharing one
 * PostgreSQL must share it), otherwise from `secret.key` in the data folder, made on first use.
 */
function loadMasterKey(env: Env, dataDir: string): Buffer {
  const fromEnv = env.DRAGNET_SECRET_KEY;
  if (fromEnv) {
    if (fromEnv.length < 32) throw new Error('DRAGNET_SECRET_KEY must be at least 32 characters');
    return createHash('sha256').update(fromEnv).digest();
  }
  const keyFile = path.join(dataDir, 'secret.key');
  if (!existsSync(keyFile)) {
    mkdirSync(dataDir, { recursive: true });
    try {
      writeFileSync(keyFile, randomBytes(32).toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
    } catch (error) {
      // Another process (the CLI beside a starting server) created it first: use theirs.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  const key = Buffer.from(readFileSync(keyFile, 'utf8').trim(), 'base64');
  if (key.length !== 32) throw new Error(`${keyFile} does not hold a 32-byte base64 key`);
  return key;
}

export function loadConfig(env: Env = process.env): Config {
  const host = env.HOST || '127.0.0.1';
  const port = integer(env, 'PORT', 8080);
  const dataDir = path.resolve(env.DRAGNET_DATA_DIR || 'data');
  const databaseUrl = env.DRAGNET_DATABASE_URL || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new Error('DRAGNET_DATABASE_URL must be a postgres:// URL');
  }
  const displayHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return {
    host,
    port,
    dataDir,
    databaseUrl,
    redisUrl: env.DRAGNET_REDIS_URL || undefined,
    rateLimitsEnabled: env.DRAGNET_RATE_LIMITS !== 'off',
    masterKey: loadMasterKey(env, dataDir),
    logLevel: env.DRAGNET_LOG_LEVEL || 'info',
    trustProxy: env.DRAGNET_TRUST_PROXY === 'true',
    dashboardUrl: (env.DRAGNET_DASHBOARD_URL || `http://${displayHost}:${port}`).replace(/\/+$/, ''),
    defaultAlertRuleLimit: integer(env, 'DRAGNET_DEFAULT_ALERT_RULE_LIMIT', 20, 1),
    bodyLimitBytes: integer(env, 'DRAGNET_BODY_LIMIT_BYTES', 1_048_576, 1024),
    loginThrottle: {
      windowSeconds: integer(env, 'DRAGNET_LOGIN_WINDOW_SECONDS', 900, 1),
      maxFailuresPerAccount: integer(env, 'DRAGNET_LOGIN_MAX_FAILURES_PER_ACCOUNT', 5, 1),
      maxFailuresPerAddress: integer(env, 'DRAGNET_LOGIN_MAX_FAILURES_PER_ADDRESS', 20, 1),
    },
  };
}
