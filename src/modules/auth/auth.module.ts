import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import type { Clock } from '../../lib/clock.ts';
import type { KeyRing } from '../../lib/crypto.ts';
import type { AuditLog } from '../audit/index.ts';
import type { UserRepository } from '../orgs/index.ts';
import { authRoutes } from './auth.routes.ts';
import { createAuthService } from './auth.service.ts';
import { createLoginThrottle, type LoginThrottleSettings } from './login-throttle.ts';
import { createTokenService } from './token.service.ts';

export function createAuthModule(deps: {
  db: Kysely<Database>;
  users: UserRepository;
  keys: KeyRing;
  clock: Clock;
  throttle: LoginThrottleSettings;
  audit: AuditLog;
}) {
  const tokens = createTokenService({ jwtKey: deps.keys.jwtKey, clock: deps.clock });
  const service = createAuthService({
    db: deps.db,
    users: deps.users,
    tokens,
    throttle: createLoginThrottle({ db: deps.db, clock: deps.clock, settings: deps.throttle }),
    keys: deps.keys,
    clock: deps.clock,
    audit: deps.audit,
  });
  return { service, tokens, routes: authRoutes(service) };
}
