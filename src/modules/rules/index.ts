// The monitoring-rules module's public surface.
export { frequencies, frequencyHours, isFrequency, type Frequency } from './frequency.ts';
export { createRulesModule } from './rules.module.ts';
export { completeAsyncRunJob } from './jobs/complete-async-run.job.ts';
