// Collectors (scheduled fetchers and the inbox folder) and the ingestion endpoint (docs/collectors.md).
export { createIngestionModule } from './ingestion.module.ts';
