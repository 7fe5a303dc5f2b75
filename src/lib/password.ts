import { hash, verify } from '@node-rs/argon2';
import { validationError } from './errors.ts';

// argon2id with the OWASP-recommended floor (19 MiB, 2 passes); @node-rs/argon2 defaults to id.
const argon2Options = { memoryCost: 19_456, timeCost: 2, parallelism: 1 };

export const hashPassword = (password: string): Promise<string> => hash(password, argon2Options);

export const verifyPassword = (passwordHash: string, password: string): Promise<boolean> =>
  verify(passwordHash, password).catch(() => false);

export const PASSWORD_MIN_LENGTH = 10;
export const PASSWORD_MAX_LENGTH = 128;

/**
 * The strength rule (documented in docs/api.md): 10 to 128 characters, at least 5 distinct
 * characters, and not containing the account's email address or its local part. Length beats
 * composition rules (NIST SP 800-63B), so no "one symbol" requirement.
 */
export function assertPasswordStrength(password: string, email: string, field = 'password'): void {
  const characters = [...password];
  if (characters.length < PASSWORD_MIN_LENGTH) {
    throw validationError(field, `must be at least ${PASSWORD_MIN_LENGTH} characters`);
  }
  if (characters.length > PASSWORD_MAX_LENGTH) {
    throw validationError(field, `must be at most ${PASSWORD_MAX_LENGTH} characters`);
  }
  if (new Set(characters).size < 5) {
    throw validationError(field, 'must contain at least 5 different characters');
  }
  const lowered = password.toLowerCase();
  const localPart = email.toLowerCase().split('@')[0] ?? '';
  if (lowered.includes(email.toLowerCase()) || (localPart.length >= 3 && lowered.includes(localPart))) {
    throw validationError(field, 'must not contain the account email address');
  }
}
