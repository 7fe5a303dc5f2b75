import { randomUUID } from 'node:crypto';
import { SignJWT, errors as joseErrors, jwtVerify } from 'jose';
import { epochMs, type Clock } from '../../lib/clock.ts';
import { importHmacKey } from '../../lib/crypto.ts';
import { AppError } from '../../lib/errors.ts';
import type { MaybePromise } from '../../lib/maybe-promise.ts';

export const ACCESS_TOKEN_SECONDS = 24 * 3600; // spec 5.3
export const REFRESH_TOKEN_SECONDS = 7 * 24 * 3600;

export type TokenType = 'access' | 'refresh';

export interface TokenSubject {
  id: number;
  token_version: number;
}

export interface VerifiedToken {
  userId: number;
  tokenVersion: number;
}

const ISSUER = 'dragnet';

/** Tokens whose signature has been checked, kept per process; beyond this the oldest go first. */
const VERIFIED_CACHE_SIZE = 10_000;

interface VerifiedEntry extends VerifiedToken {
  type: TokenType;
  expiresAt: number;
}

export function createTokenService(deps: { jwtKey: Uint8Array; clock: Clock }) {
  const key = importHmacKey(deps.jwtKey);
  const nowSeconds = () => Math.floor(epochMs(deps.clock) / 1000);
  const verified = new Map<string, VerifiedEntry>();

  const sign = async (subject: TokenSubject, type: TokenType): Promise<string> => {
    const issuedAt = nowSeconds();
    return new SignJWT({ token_type: type, tv: subject.token_version })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(ISSUER)
      .setSubject(String(subject.id))
      .setIssuedAt(issuedAt)
      .setExpirationTime(issuedAt + (type === 'access' ? ACCESS_TOKEN_SECONDS : REFRESH_TOKEN_SECONDS))
      .setJti(randomUUID())
      .sign(await key);
  };

  async function verifySignature(token: string, expected: TokenType): Promise<VerifiedToken> {
    try {
      const { payload } = await jwtVerify(token, await key, {
        algorithms: ['HS256'],
        issuer: ISSUER,
        requiredClaims: ['exp', 'sub'],
        currentDate: deps.clock.now(),
      });
      const userId = Number(payload.sub);
      if (payload.token_type !== expected || !Number.isSafeInteger(userId) || typeof payload.tv !== 'number') {
        throw new AppError('unauthorized', `not ${expected === 'access' ? 'an access' : 'a refresh'} token`);
      }
      if (verified.size >= VERIFIED_CACHE_SIZE) verified.delete(verified.keys().next().value!);
      verified.set(token, { userId, tokenVersion: payload.tv, type: expected, expiresAt: payload.exp! });
      return { userId, tokenVersion: payload.tv };
    } catch (error) {
      if (error instanceof AppError) throw error;
      if (error instanceof joseErrors.JWTExpired) throw new AppError('unauthorized', `${expected} token has expired`);
      throw new AppError('unauthorized', `invalid ${expected} token`);
    }
  }

  return {
    issueAccess: (subject: TokenSubject) => sign(subject, 'access'),

    async issuePair(subject: TokenSubject): Promise<{ access: string; refresh: string }> {
      return { access: await sign(subject, 'access'), refresh: await sign(subject, 'refresh') };
    },

    /**
     * Verifies signature, expiry and type; the caller checks the user and token version.
     * A client sends the same access token with every request, and checking its HMAC through
     * WebCrypto costs more than the rest of a small request: a token verified once is
     * remembered by its exact text (so nothing unsigned can match) and only its expiry is
     * checked again, synchronously. Revocation does not depend on this: it is the user's
     * token version.
     */
    verify(token: string, expected: TokenType): MaybePromise<VerifiedToken> {
      const known = verified.get(token);
      if (!known) return verifySignature(token, expected);
      if (known.type !== expected)
        throw new AppError('unauthorized', `not ${expected === 'access' ? 'an access' : 'a refresh'} token`);
      if (known.expiresAt <= nowSeconds()) throw new AppError('unauthorized', `${expected} token has expired`);
      return { userId: known.userId, tokenVersion: known.tokenVersion };
    },
  };
}

export type TokenService = ReturnType<typeof createTokenService>;
