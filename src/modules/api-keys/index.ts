// The API keys module's public surface.
export { createApiKeysModule } from './api-keys.module.ts';
export type { ApiKeyService } from './api-key.service.ts';
