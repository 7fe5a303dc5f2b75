// Collectors (scheduled fetchers and the inbox folder) and the ingestion endpoint (docs/collectors.md).
export { createIngestionModule } from './ingestion.module.ts';
export type { CollectorRunner, CollectorRunReport, CollectorStatus } from './collector-runner.ts';
export { CollectorsFileError } from './collectors-file.ts';
