// Quick searches over the credential store (spec 4.5 names them, docs/api.md designs them).
export { createQuickSearchModule } from './quick-search.module.ts';
