// The monitoring-rules module's public surface.
export { createRulesModule } from './rules.module.ts';
export { completeAsyncRunJob } from './jobs/complete-async-run.job.ts';
