// The usage module's public surface: rate limits and their use.
export { ACCOUNT_SCOPE, serviceScope, type LimitResolver } from './limits.ts';
export type { RateLimiter } from './rate-limiter.ts';
export { createUsageModule } from './usage.module.ts';
