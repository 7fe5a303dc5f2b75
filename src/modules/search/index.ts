// The messenger search module's public surface.
export { createSearchModule } from './search.module.ts';
export type { FollowUpTokens } from './follow-up-token.ts';
