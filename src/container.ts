import type { Config } from './config.ts';
import { migrateToLatest } from './db/migrate.ts';
import { openStore, type Store } from './db/store.ts';
import { systemClock, type Clock } from './lib/clock.ts';
import { createKeyRing } from './lib/crypto.ts';
import { createBackgroundTasks, stderrLog, type Log } from './lib/log.ts';
import { createMetrics } from './lib/metrics.ts';
import { createOutboundGuard, parseAllowList } from './lib/outbound/index.ts';
import { readQueueDepth } from './jobs/queue-depth.ts';
import { createApiKeysModule } from './modules/api-keys/index.ts';
import { createAuditModule } from './modules/audit/index.ts';
import { createAuthModule } from './modules/auth/index.ts';
import { createCtiModule } from './modules/cti/index.ts';
import { createDeliveryModule } from './modules/delivery/index.ts';
import { completeAsyncRunJob, createRulesModule } from './modules/rules/index.ts';
import { bindJob } from './jobs/define-job.ts';
import { createJobQueue, createJobWorker } from './jobs/job-queue.ts';
import { createWorkerPresence } from './jobs/worker-presence.ts';
import { createOrgsModule } from './modules/orgs/index.ts';
import { createSearchModule } from './modules/search/index.ts';
import { createIngestionModule } from './modules/ingestion/index.ts';
import { createQuickSearchModule } from './modules/quick-search/index.ts';
import { createUsageModule } from './modules/usage/index.ts';
import { sourceMigrations } from './modules/sources/index.ts';

/** Where the store is and how long its statements may take, as configured. */
const storeOptions = (config: Config) => ({
  dataDir: config.dataDir,
  databaseUrl: config.databaseUrl,
  readUrls: config.databaseReadUrls,
  busyTimeoutMs: config.sqliteBusyTimeoutMs,
  searchTimeoutMs: config.searchTimeoutMs,
  ruleRunTimeoutMs: config.ruleRunTimeoutMs,
  preparedStatements: config.pgPreparedStatements,
});

/** The composition root: opens the store and calls each module's factory, nothing else. */
export async function createContainer(config: Config, options: { clock?: Clock; store?: Store; log?: Log } = {}) {
  const clock = options.clock ?? systemClock;
  const log = options.log ?? stderrLog;
  const background = createBackgroundTasks(log);
  const store = options.store ?? openStore(storeOptions(config));
  const keys = createKeyRing(config.masterKey, config.cardHashKey);
  await migrateToLatest(store, { keys, sourceMigrations: sourceMigrations() });
  const metrics = createMetrics({ queueDepth: () => readQueueDepth(store.db), reads: store.reads });
  const audit = createAuditModule({ db: store.db, clock });
  // Tenants choose their webhooks' and senders' targets; only the operator chooses collectors'
  // feeds, so only collectors get the operator's collector list on top.
  const outbound = createOutboundGuard(parseAllowList(config.outboundAllowHosts));
  const collectorOutbound = createOutboundGuard(
    parseAllowList([...config.outboundAllowHosts, ...config.collectorAllowHosts]),
  );

  const orgs = await createOrgsModule({ store, clock, config });
  const auth = createAuthModule({
    db: store.db,
    users: orgs.userRepository,
    keys,
    clock,
    throttle: config.loginThrottle,
    audit: audit.log,
  });

  const search = createSearchModule({ store, clock, jwtKey: keys.jwtKey, log, background });
  const usage = await createUsageModule({ store, clock, redisUrl: config.redisUrl, log });
  const delivery = await createDeliveryModule({
    store,
    clock,
    keys,
    config: config.delivery,
    dashboardUrl: async (orgId) => (await orgs.organizations.get(orgId)).dashboard_url,
    metrics,
    audit: audit.log,
    guard: outbound,
    background,
  });
  const presence = createWorkerPresence({ db: store.db, clock, heartbeatMs: config.workerHeartbeatMs });
  const jobQueue = createJobQueue({ db: store.db, clock });
  const rules = createRulesModule({
    store,
    clock,
    keys,
    presence,
    dataDir: config.dataDir,
    background,
    log,
    jobs: jobQueue,
    organizations: orgs.organizations,
    delivery: delivery.service,
    followUps: search.followUps,
    audit: audit.log,
  });
  // Every job there is: a worker runs the queued rows that name one of these and fails the others.
  const jobs = createJobWorker({
    db: store.db,
    engine: store.engine,
    clock,
    presence,
    log,
    jobs: [bindJob(completeAsyncRunJob, { runner: rules.runner })],
  });

  const sourceContext = { db: store.db, engine: store.engine, clock, keys, dataDir: config.dataDir, background, log };
  // Quick searches are searches: on the search pool, under DRAGNET_SEARCH_TIMEOUT_MS on PostgreSQL.
  const quickSearch = createQuickSearchModule({
    context: { ...sourceContext, db: store.reader },
    reads: store.reads,
    limiter: usage.limiter,
    limits: usage.limits,
  });
  const apiKeys = createApiKeysModule({ store, keys, clock, orgs, audit: audit.log, background });
  const cti = createCtiModule({ db: store.db, clock, instanceName: 'Dragnet' });
  const ingestion = createIngestionModule({
    db: store.db,
    clock,
    context: sourceContext,
    collectorsFile: config.collectorsFile,
    ingestMaxBytes: config.ingestMaxBytes,
    metrics,
    guard: collectorOutbound,
  });

  return {
    config,
    clock,
    store,
    keys,
    metrics,
    audit: audit.log,
    organizations: orgs.organizations,
    /** Where notification links point for organizations without dashboard_url; `serve` records its own. */
    dashboardAddress: orgs.dashboardAddress,
    users: orgs.users,
    auth: auth.service,
    tokens: auth.tokens,
    apiKeys: apiKeys.service,
    search: search.service,
    /** The scheduler's housekeeping: searches older than DRAGNET_SEARCH_HISTORY_RETENTION_DAYS go. */
    pruneSearchHistory: (now: Date) => search.service.pruneHistory(now, config.searchHistoryRetentionDays),
    followUps: search.followUps,
    corpus: search.writer,
    /** What source plugins run with: ingesters, demo data and matchers. */
    sourceContext,
    limits: usage.limits,
    limiter: usage.limiter,
    usageCatalog: usage.catalog,
    delivery: delivery.service,
    /** The job worker (the scheduler runs it; `dragnet rules tick` too). */
    jobs,
    rules: rules.rules,
    runner: rules.runner,
    matches: rules.matches,
    notifier: rules.notifier,
    /** The collectors this process may run (the worker starts them). */
    collectors: ingestion.collectors,
    /** HTTP out through the outbound guard, as collectors get it. */
    collectorHttp: ingestion.http,
    routes: [
      auth.routes,
      orgs.routes,
      search.routes,
      usage.routes,
      delivery.routes,
      rules.routes,
      quickSearch.routes,
      ingestion.routes,
      audit.routes,
      cti.routes,
      apiKeys.routes,
    ],
    async close() {
      await delivery.close();
      await ingestion.close();
      await usage.limiter.close();
      await presence.close();
      await background.settle();
      await store.close();
    },
  };
}

export type Container = Awaited<ReturnType<typeof createContainer>>;
