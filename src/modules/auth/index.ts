// The auth module's public surface.
export { createAuthModule } from './auth.module.ts';
export type { AuthService } from './auth.service.ts';
export { assertPasswordStrength, hashPassword } from './password.ts';
