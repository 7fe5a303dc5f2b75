// The monitoring-rules module's public surface.
export { createRulesModule } from './rules.module.ts';
export { startScheduler } from './scheduler.ts';
