import * as OTPAuth from 'otpauth';

/** What an authenticator app computes from a manually entered seed: SHA1, 6 digits, 30 s. */
const PERIOD_MS = 30_000;

const totpFor = (seed: string) =>
  new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(seed), algorithm: 'SHA1', digits: 6, period: PERIOD_MS / 1000 });

/** The code shown at `at`. */
export function totpCode(seed: string, at: Date): string {
  return totpFor(seed).generate({ timestamp: at.getTime() });
}

/** The code of the step after the one `at` falls in. */
export function nextStepCode(seed: string, at: Date): string {
  return totpCode(seed, new Date(at.getTime() + PERIOD_MS));
}

/** A six-digit code that is valid for none of the steps around `at` (the accepted drift). */
export function wrongCode(seed: string, at: Date): string {
  const nearby = new Set([-2, -1, 0, 1, 2].map((step) => totpCode(seed, new Date(at.getTime() + step * PERIOD_MS))));
  for (let candidate = 123_456; ; candidate = (candidate + 111_111) % 1_000_000) {
    const code = String(candidate).padStart(6, '0');
    if (!nearby.has(code)) return code;
  }
}

/** The raw secret bytes behind a base32 seed. */
export function seedBytes(seed: string): Buffer {
  return Buffer.from(OTPAuth.Secret.fromBase32(seed).bytes);
}

export const TOTP_PERIOD_MS = PERIOD_MS;
