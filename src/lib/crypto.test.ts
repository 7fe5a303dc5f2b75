import { randomBytes } from 'node:crypto';
import { jwtVerify, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { signHs256 } from './crypto.ts';

describe('signHs256', () => {
  const key = randomBytes(32);
  const now = Math.floor(Date.now() / 1000);
  const claims = {
    token_type: 'messenger_follow_up',
    org: 7,
    history_id: 123_456,
    args: { query: 'пароль "a\\b" OR x', channel_ids: [1, 2, 3], unique_only: false, context_chars: 80 },
  };

  it("makes the token jose's SignJWT makes, byte for byte", async () => {
    const jose = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuedAt(now)
      .setExpirationTime(now + 3600)
      .sign(key);
    expect(signHs256(key, { ...claims, iat: now, exp: now + 3600 })).toBe(jose);
  });

  it('verifies with jose under its key only, carrying the claims', async () => {
    const token = signHs256(key, { ...claims, iat: now, exp: now + 3600 });
    const { payload, protectedHeader } = await jwtVerify(token, key, { algorithms: ['HS256'] });
    expect(protectedHeader).toEqual({ alg: 'HS256' });
    expect(payload).toEqual({ ...claims, iat: now, exp: now + 3600 });
    await expect(jwtVerify(token, randomBytes(32), { algorithms: ['HS256'] })).rejects.toThrow();
  });
});
