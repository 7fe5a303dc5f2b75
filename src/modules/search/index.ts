// The messenger search module's public surface (the messenger source shares its query language).
export { predicateCompilers } from './message-search.sql.ts';
export { foldText, matchesFolded, parseQuery, positiveTerms, QuerySyntaxError, type QueryNode } from './query-language.ts';
export type { MessageRow } from './search.repository.ts';
export { createSearchModule } from './search.module.ts';
export type { FollowUpTokens } from './follow-up-token.ts';
export { textPreview } from './text-preview.ts';
