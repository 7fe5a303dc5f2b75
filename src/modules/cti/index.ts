// The CTI module's public surface: STIX 2.1, TAXII 2.1 and MISP exports of hits.
export { createCtiModule } from './cti.module.ts';
export { TLP_LEVELS } from './exported-hits.ts';
export { exportedHit, selectExportedHits } from './exported-hits.ts';
