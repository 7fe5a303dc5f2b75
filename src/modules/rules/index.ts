// The monitoring-rules module's public surface.
export { frequencies, frequencyHours, isFrequency, type Frequency } from './frequency.ts';
export { createRulesModule } from './rules.module.ts';
export { startScheduler } from './scheduler.ts';
