import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes, webcrypto } from 'node:crypto';

/**
 * Keys for everything secret in the store, all derived from one master key so an operator has a
 * single value to back up (DRAGNET_SECRET_KEY or the generated `secret.key` in the data folder).
 */
export interface KeyRing {
  /** HS256 key for access and refresh tokens. */
  jwtKey: Uint8Array;
  encryptSecret(plaintext: string): string;
  decryptSecret(sealed: string): string;
  /** Keyed digest for values that are only ever compared (backup codes, signed tokens). */
  digest(value: string): string;
  /**
   * Digest of a card number (or a part of one): `digest`, then keyed again with the card hash
   * key, which backups leave out. A backup holds secret.key, and with it alone a stored BIN and
   * last four leave few enough candidates to confirm each against a digest.
   */
  cardDigest(value: string): string;
  /** The second step of `cardDigest`, for digests stored before the card hash key existed. */
  rekeyCardDigest(legacyDigest: string): string;
}

const SEALED_PREFIX = 'v1:';

// IVs are drawn from a pool refilled 12 KiB at a time: randomBytes per call costs more than the
// encryption of a short secret, and bulk ingestion seals one password per credential.
const IV_BYTES = 12;
let ivPool = Buffer.alloc(0);
let ivOffset = 0;
function nextIv(): Buffer {
  if (ivOffset + IV_BYTES > ivPool.length) {
    ivPool = randomBytes(IV_BYTES * 1024);
    ivOffset = 0;
  }
  ivOffset += IV_BYTES;
  return ivPool.subarray(ivOffset - IV_BYTES, ivOffset);
}

export function createKeyRing(masterKey: Buffer, cardHashKey: Buffer): KeyRing {
  const derive = (purpose: string) =>
    Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), `dragnet:${purpose}`, 32));
  const jwtKey = derive('jwt');
  const encryptionKey = derive('secrets-at-rest');
  const digestKey = derive('digest');
  const digest = (value: string) => createHmac('sha256', digestKey).update(value).digest('hex');
  const rekeyCardDigest = (legacyDigest: string) =>
    createHmac('sha256', cardHashKey).update(legacyDigest).digest('hex');

  return {
    jwtKey,
    encryptSecret(plaintext) {
      const iv = nextIv();
      const cipher = createCipheriv('aes-256-gcm', encryptionKey, iv);
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return SEALED_PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
    },
    decryptSecret(sealed) {
      if (!sealed.startsWith(SEALED_PREFIX)) throw new Error('unknown sealed-secret format');
      const raw = Buffer.from(sealed.slice(SEALED_PREFIX.length), 'base64');
      const decipher = createDecipheriv('aes-256-gcm', encryptionKey, raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    },
    digest,
    cardDigest: (value) => rekeyCardDigest(digest(value)),
    rekeyCardDigest,
  };
}

/**
 * A name for a key that reveals nothing of it: a backup records its card hash key's, so a
 * restore can tell whether the data folder holds the same one.
 */
export const keyId = (key: Buffer): string =>
  createHmac('sha256', key).update('dragnet:key-id').digest('hex').slice(0, 16);

/**
 * The JWT key as a WebCrypto key, imported once: jose turns a KeyObject into a CryptoKey on
 * every sign and verify, which measured as a sixth of an authenticated request's CPU time.
 */
export function importHmacKey(raw: Uint8Array): Promise<webcrypto.CryptoKey> {
  return webcrypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
}

const HS256_HEADER = Buffer.from(JSON.stringify({ alg: 'HS256' })).toString('base64url');

/**
 * An HS256 JWT of `claims`, byte for byte what jose's SignJWT makes with the header
 * `{ alg: 'HS256' }`, signed synchronously: jose signs through WebCrypto, a job on the thread
 * pool and two promises, which measured as a search answer's costliest step in JavaScript.
 */
export function signHs256(key: Uint8Array, claims: Record<string, unknown>): string {
  const input = `${HS256_HEADER}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  return `${input}.${createHmac('sha256', key).update(input).digest('base64url')}`;
}
