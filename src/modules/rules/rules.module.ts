import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Store } from '../../db/store.ts';
import type { BackgroundTasks } from '../../lib/log.ts';
import type { KeyRing } from '../../lib/crypto.ts';
import type { Log } from '../../lib/log.ts';
import type { JobQueue } from '../../jobs/job-queue.ts';
import type { WorkerPresence } from '../../jobs/worker-presence.ts';
import type { Clock } from '../../lib/clock.ts';
import type { AuditLog } from '../audit/index.ts';
import type { DeliveryService } from '../delivery/index.ts';
import type { OrganizationService } from '../orgs/index.ts';
import type { FollowUpTokens } from '../search/index.ts';
import { createIncidentRepository } from './incident.repository.ts';
import { incidentRoutes } from './incident.routes.ts';
import { createIncidentService } from './incident.service.ts';
import { createMatchService } from './match.service.ts';
import { createNotifier } from './notifier.ts';
import { createRuleRunner } from './rule-runner.ts';
import { createRuleRepository } from './rule.repository.ts';
import { ruleRoutes } from './rule.routes.ts';
import { createRuleService } from './rule.service.ts';
import { createRuleSteering } from './rule-steering.ts';
import { createRunRepository } from './run.repository.ts';

export function createRulesModule(deps: {
  store: Store;
  clock: Clock;
  keys: KeyRing;
  dataDir: string;
  background: BackgroundTasks;
  log: Log;
  jobs: JobQueue;
  presence: WorkerPresence;
  organizations: OrganizationService;
  delivery: DeliveryService;
  followUps: FollowUpTokens;
  audit: AuditLog;
}) {
  const { store, clock } = deps;
  const context = {
    db: store.db,
    engine: store.engine,
    clock,
    keys: deps.keys,
    dataDir: deps.dataDir,
    background: deps.background,
    log: deps.log,
  };
  const ruleRepository = createRuleRepository({ db: store.db, engine: store.engine, presence: deps.presence });
  const runRepository = createRunRepository({ db: store.db, presence: deps.presence });
  const rules = createRuleService({
    rules: ruleRepository,
    clock,
    context,
    organizations: deps.organizations,
    followUps: deps.followUps,
  });
  const runner = createRuleRunner({
    context,
    ruleRuns: store.ruleRuns,
    jobs: deps.jobs,
    presence: deps.presence,
    rules: ruleRepository,
    runs: runRepository,
  });
  const matches = createMatchService({
    context,
    rules: ruleRepository,
    runs: runRepository,
    ...(store.reads.enabled
      ? {
          replicas: {
            reads: store.reads,
            rules: createRuleRepository({ db: store.reader, engine: store.engine, presence: deps.presence }),
            runs: createRunRepository({ db: store.reader, presence: deps.presence }),
          },
        }
      : {}),
  });
  const notifier = createNotifier({
    db: store.db,
    engine: store.engine,
    clock,
    presence: deps.presence,
    delivery: deps.delivery,
    organizations: deps.organizations,
    log: deps.log,
  });
  const steering = createRuleSteering({ rules, ruleRepository, runner, matches, clock });
  // A delivery resource used by an active rule cannot be deleted (spec 3.5).
  deps.delivery.setReferenceCheck((orgId, kind, id, tx) => ruleRepository.referencing(orgId, kind, id, tx));
  const incidents = createIncidentService({
    incidents: createIncidentRepository({ db: store.db, engine: store.engine }),
    rules: ruleRepository,
    runs: runRepository,
    audit: deps.audit,
    clock,
  });
  const routes: FastifyPluginAsyncTypebox = async (app) => {
    await app.register(ruleRoutes({ rules, runner, matches, steering, audit: deps.audit }));
    await app.register(incidentRoutes(incidents));
  };
  return { rules, runner, matches, notifier, routes };
}
