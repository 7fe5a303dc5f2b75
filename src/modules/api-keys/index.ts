// The API keys module's public surface.
export { createApiKeysModule } from './api-keys.module.ts';
