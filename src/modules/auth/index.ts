// The auth module's public surface.
export { createAuthModule } from './auth.module.ts';
