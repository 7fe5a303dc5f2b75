import { randomInt } from 'node:crypto';
import * as OTPAuth from 'otpauth';

const PERIOD_SECONDS = 30;
const BACKUP_CODE_COUNT = 10;
// Crockford-style alphabet without look-alikes (0/O, 1/I/L), so codes survive being read aloud.
const BACKUP_ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';

const totpFor = (seed: string, email: string) =>
  new OTPAuth.TOTP({
    issuer: 'Dragnet',
    label: email,
    algorithm: 'SHA1',
    digits: 6,
    period: PERIOD_SECONDS,
    secret: OTPAuth.Secret.fromBase32(seed),
  });

export function newTotpSeed(): string {
  return new OTPAuth.Secret({ size: 20 }).base32;
}

export async function enrollmentDetails(seed: string, email: string) {
  const uri = totpFor(seed, email).toString();
  // Loaded on the first enrollment rather than by every process that imports the auth module.
  const { default: QRCode } = await import('qrcode');
  return { seed, qr_code_url: uri, qr_code_image: await QRCode.toDataURL(uri) };
}

/**
 * The time step a code belongs to, or null when it is not valid now. One step of drift either
 * way is accepted; the caller stores the step so the same code cannot be used twice.
 */
export function matchingTotpStep(seed: string, code: string, at: Date): number | null {
  const token = code.replace(/\s+/g, '');
  if (!/^\d{6}$/.test(token)) return null;
  const timestamp = at.getTime();
  const delta = totpFor(seed, 'x').validate({ token, timestamp, window: 1 });
  return delta === null ? null : Math.floor(timestamp / 1000 / PERIOD_SECONDS) + delta;
}

export function newBackupCodes(): string[] {
  const pick = () => Array.from({ length: 5 }, () => BACKUP_ALPHABET[randomInt(BACKUP_ALPHABET.length)]).join('');
  return Array.from({ length: BACKUP_CODE_COUNT }, () => `${pick()}-${pick()}`);
}

/** Backup codes are compared case- and hyphen-insensitively. */
export const canonicalBackupCode = (code: string): string => code.replace(/[\s-]+/g, '').toUpperCase();
