import { randomBytes } from 'node:crypto';
import { SignJWT, decodeJwt } from 'jose';
import * as OTPAuth from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY_MS } from '../src/lib/clock.ts';
import { expectError, fieldsOf } from './support/http.ts';
import { createTestApp, DEFAULT_PASSWORD, type TestApp } from './support/test-app.ts';
import { TOTP_PERIOD_MS, nextStepCode, totpCode, wrongCode } from './support/totp.ts';

const MINUTE_MS = 60_000;
const NEW_PASSWORD = 'a much better passphrase 42';

describe('authentication over HTTP', () => {
  let t: TestApp;
  let serial = 0;

  beforeAll(async () => {
    // Many tests here fail logins on purpose from the same injected address; the address
    // throttle has its own describe block below, so keep it out of the way here.
    t = await createTestApp({ env: { DRAGNET_LOGIN_MAX_FAILURES_PER_ADDRESS: '10000' } });
  });
  afterAll(() => t.close());

  /** A fresh user of its own, so tests that change an account do not touch each other. */
  async function newUser() {
    const email = `user${++serial}@acme.test`;
    const { id } = await t.createUser({ org: 'Acme', email });
    return { email, id };
  }

  const postLogin = (body: Record<string, unknown>) => t.request({ method: 'POST', url: '/token/', body });
  const postRefresh = (refresh: string) => t.request({ method: 'POST', url: '/token/refresh/', body: { refresh } });
  const account = (token: string | undefined, headers?: Record<string, string>) =>
    t.request({ method: 'GET', url: '/service/account/', token, headers });

  describe('login and refresh', () => {
    it('login returns an access and a refresh token, and the access token opens /service/', async () => {
      const { email } = await newUser();
      const response = await postLogin({ email, password: DEFAULT_PASSWORD });
      expect(response.statusCode).toBe(200);
      const pair = response.json();
      expect(pair).toEqual({ access: expect.any(String), refresh: expect.any(String) });
      expect(pair.access).not.toBe(pair.refresh);

      const me = await account(pair.access);
      expect(me.statusCode).toBe(200);
      expect(me.json()).toMatchObject({ email, organization: 'Acme' });
    });

    it('refresh returns a new access token that works', async () => {
      const { email } = await newUser();
      const { access, refresh } = await t.login(email);
      t.clock.advance(5_000);
      const response = await postRefresh(refresh);
      expect(response.statusCode).toBe(200);
      const body = response.json();
      expect(Object.keys(body)).toEqual(['access']);
      expect(body.access).not.toBe(access);
      expect((await account(body.access)).statusCode).toBe(200);
    });

    it('accepts the email in any letter case', async () => {
      const { email } = await newUser();
      const response = await postLogin({ email: email.toUpperCase(), password: DEFAULT_PASSWORD });
      expect(response.statusCode).toBe(200);
    });

    it('unknown email and wrong password give the same status, code and message', async () => {
      const { email } = await newUser();
      const unknown = expectError(await postLogin({ email: 'nobody@acme.test', password: DEFAULT_PASSWORD }), 401);
      const wrong = expectError(await postLogin({ email, password: 'not the password at all' }), 401);
      expect(wrong.code).toBe(unknown.code);
      expect(wrong.message).toBe(unknown.message);
      const withoutRequestId = (body: Record<string, unknown>) =>
        Object.fromEntries(Object.entries(body).filter(([key]) => key !== 'request_id'));
      expect(withoutRequestId(wrong)).toEqual(withoutRequestId(unknown));
    });
  });

  describe('401 on /service/', () => {
    let token: { access: string; refresh: string };
    let userId: number;
    let otherUserId: number;

    beforeAll(async () => {
      const user = await newUser();
      userId = user.id;
      otherUserId = (await newUser()).id;
      token = await t.login(user.email);
    });

    it('without an Authorization header, on every /service/ route', async () => {
      const spec = (await t.request({ method: 'GET', url: '/openapi.json' })).json();
      const routes = Object.entries(spec.paths as Record<string, Record<string, unknown>>)
        .filter(([path]) => path.startsWith('/service/'))
        .flatMap(([path, operations]) =>
          Object.keys(operations).map((method) => ({ method: method.toUpperCase(), path })),
        );
      expect(routes.length).toBeGreaterThanOrEqual(5);
      for (const { method, path } of routes) {
        expectError(await t.request({ method, url: path }), 401, 'unauthorized');
      }
    });

    it.each([
      ['another scheme', 'Token x'],
      ['"Bearer" and nothing else', 'Bearer'],
      ['"Bearer " with an empty token', 'Bearer '],
      ['a token that is no JWT', 'Bearer not-a-jwt'],
      ['two tokens', 'Bearer a.b.c d.e.f'],
    ])('with a malformed header: %s', async (_label, header) => {
      expectError(await account(undefined, { authorization: header }), 401, 'unauthorized');
    });

    it('with a token signed with another key', async () => {
      const now = Math.floor(t.clock.now().getTime() / 1000);
      const forged = await new SignJWT({ token_type: 'access', tv: 0 })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setIssuer('dragnet')
        .setSubject(String(userId))
        .setIssuedAt(now)
        .setExpirationTime(now + 3600)
        .sign(randomBytes(32));
      expectError(await account(forged), 401, 'unauthorized');
    });

    it('with a real token whose payload was changed to another user', async () => {
      const [header, payload, signature] = token.access.split('.');
      const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString('utf8'));
      expect(Number(claims.sub)).toBe(userId);
      const tampered = Buffer.from(JSON.stringify({ ...claims, sub: String(otherUserId) })).toString('base64url');
      expectError(await account(`${header}.${tampered}.${signature}`), 401, 'unauthorized');
      // The untouched token still works, so the 401 above is the tampering.
      expect((await account(token.access)).statusCode).toBe(200);
    });

    it('with an unsigned ("alg": "none") token', async () => {
      const claims = decodeJwt(token.access);
      const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
      expectError(await account(`${part({ alg: 'none', typ: 'JWT' })}.${part(claims)}.`), 401, 'unauthorized');
    });

    it('with a refresh token used as access token', async () => {
      expectError(await account(token.refresh), 401, 'unauthorized');
    });

    it('at /token/refresh/ with an access token', async () => {
      expectError(await postRefresh(token.access), 401, 'unauthorized');
    });

    it('with an expired access token; the refresh token then gets a new one', async () => {
      const { email } = await newUser();
      const { access, refresh } = await t.login(email);
      t.clock.advance(DAY_MS - MINUTE_MS);
      expect((await account(access)).statusCode).toBe(200);
      t.clock.advance(2 * MINUTE_MS);
      expectError(await account(access), 401, 'unauthorized');

      const renewed = await postRefresh(refresh);
      expect(renewed.statusCode).toBe(200);
      expect((await account(renewed.json().access)).statusCode).toBe(200);
    });

    it('at /token/refresh/ with a refresh token older than 7 days', async () => {
      const { email } = await newUser();
      const { refresh } = await t.login(email);
      t.clock.advance(7 * DAY_MS - MINUTE_MS);
      expect((await postRefresh(refresh)).statusCode).toBe(200);
      t.clock.advance(2 * MINUTE_MS);
      expectError(await postRefresh(refresh), 401, 'unauthorized');
    });

    it('for a disabled user: live tokens, refresh and login all fail', async () => {
      const { email } = await newUser();
      const { access, refresh } = await t.login(email);
      expect((await account(access)).statusCode).toBe(200);

      await t.container.users.setActive(email, false);
      expectError(await account(access), 401, 'unauthorized');
      expectError(await postRefresh(refresh), 401, 'unauthorized');
      const login = expectError(await postLogin({ email, password: DEFAULT_PASSWORD }), 401);
      const unknown = expectError(await postLogin({ email: 'nobody@acme.test', password: DEFAULT_PASSWORD }), 401);
      expect([login.code, login.message]).toEqual([unknown.code, unknown.message]);

      await t.container.users.setActive(email, true);
      expect((await postLogin({ email, password: DEFAULT_PASSWORD })).statusCode).toBe(200);
    });

    it('for tokens issued before POST /service/new_password/', async () => {
      const { email } = await newUser();
      const old = await t.login(email);
      const changed = await t.request({
        method: 'POST',
        url: '/service/new_password/',
        token: old.access,
        body: { password: DEFAULT_PASSWORD, new_password: NEW_PASSWORD, confirm_new_password: NEW_PASSWORD },
      });
      expect(changed.statusCode).toBe(200);
      expectError(await account(old.access), 401, 'unauthorized');
      expectError(await postRefresh(old.refresh), 401, 'unauthorized');
    });
  });

  describe('two-factor authentication', () => {
    const setup = (access: string, password = DEFAULT_PASSWORD) =>
      t.request({ method: 'POST', url: '/service/setup_2fa/', token: access, body: { password } });
    const verify = (access: string, otp: string) =>
      t.request({ method: 'POST', url: '/service/verify_2fa_enrollment/', token: access, body: { otp } });

    /**
     * A user with 2FA enabled through the API, and the access token the enrolment answered; the
     * clock is then one step past enrollment.
     */
    async function enrolledUser() {
      const { email } = await newUser();
      const { access } = await t.login(email);
      const { seed } = (await setup(access)).json();
      const enrollmentCode = totpCode(seed, t.clock.now());
      const verified = await verify(access, enrollmentCode);
      expect(verified.statusCode, verified.body).toBe(200);
      t.clock.advance(TOTP_PERIOD_MS);
      return {
        email,
        access: verified.json().access as string,
        seed,
        enrollmentCode,
        backupCodes: verified.json().backup_codes as string[],
      };
    }

    it('setup_2fa returns a seed, its otpauth:// URI and a PNG QR code', async () => {
      const { email } = await newUser();
      const { access } = await t.login(email);
      const response = await setup(access);
      expect(response.statusCode).toBe(200);
      const body = response.json();
      expect(body.seed).toMatch(/^[A-Z2-7]{16,}=*$/);
      expect(body.qr_code_url).toMatch(/^otpauth:\/\/totp\//);
      const parsed = OTPAuth.URI.parse(body.qr_code_url);
      expect(parsed).toBeInstanceOf(OTPAuth.TOTP);
      expect(parsed.secret.base32).toBe(body.seed);
      expect(parsed.label).toBe(email);
      const totp = parsed as OTPAuth.TOTP;
      expect([totp.algorithm, totp.digits, totp.period]).toEqual(['SHA1', 6, 30]);

      expect(body.qr_code_image).toMatch(/^data:image\/png;base64,/);
      const png = Buffer.from(body.qr_code_image.slice('data:image/png;base64,'.length), 'base64');
      expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));

      // Only started: the account is not yet protected and logs in without otp.
      expect((await account(access)).json().two_factor_enabled).toBe(false);
      expect((await postLogin({ email, password: DEFAULT_PASSWORD })).statusCode).toBe(200);
    });

    it('verify_2fa_enrollment without setup_2fa first is 409', async () => {
      const { email } = await newUser();
      const { access } = await t.login(email);
      expectError(await verify(access, '123456'), 409, 'conflict');
    });

    it('verify_2fa_enrollment with a wrong code is 400 naming otp and enables nothing', async () => {
      const { email } = await newUser();
      const { access } = await t.login(email);
      const { seed } = (await setup(access)).json();
      const body = expectError(await verify(access, wrongCode(seed, t.clock.now())), 400);
      expect(fieldsOf(body)).toContain('otp');
      expect((await account(access)).json().two_factor_enabled).toBe(false);
    });

    it('verify_2fa_enrollment with a current code returns ten backup codes and enables 2FA', async () => {
      const { email } = await newUser();
      const { access } = await t.login(email);
      const { seed } = (await setup(access)).json();
      const response = await verify(access, totpCode(seed, t.clock.now()));
      expect(response.statusCode).toBe(200);
      const codes = response.json().backup_codes;
      expect(codes).toHaveLength(10);
      for (const code of codes) expect(code).toEqual(expect.any(String));
      expect(new Set(codes).size).toBe(10);
      expect((await account(response.json().access)).json().two_factor_enabled).toBe(true);
    });

    it('verify_2fa_enrollment revokes every session opened before and answers new tokens for this one', async () => {
      const { email } = await newUser();
      const here = await t.login(email);
      // A session opened elsewhere before 2FA, perhaps with a stolen password.
      const elsewhere = await t.login(email);
      const { seed } = (await setup(here.access)).json();
      const response = await verify(here.access, totpCode(seed, t.clock.now()));
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json()).toMatchObject({ access: expect.any(String), refresh: expect.any(String) });

      for (const old of [here, elsewhere]) {
        expectError(await account(old.access), 401, 'unauthorized');
        expectError(await postRefresh(old.refresh), 401, 'unauthorized');
      }
      expect((await account(response.json().access)).statusCode).toBe(200);
      expect((await postRefresh(response.json().refresh)).statusCode).toBe(200);
    });

    it('setup_2fa needs the current password: missing or wrong is 400 naming password, and starts nothing', async () => {
      const { email } = await newUser();
      const { access } = await t.login(email);
      const missing = expectError(await t.request({ method: 'POST', url: '/service/setup_2fa/', token: access }), 400);
      expect(missing.code).toBe('validation_failed');
      expect(fieldsOf(expectError(await setup(access, 'not the password at all'), 400))).toEqual(['password']);
      // Nothing pending: there is no seed to confirm.
      expectError(await verify(access, '123456'), 409, 'conflict');
      expect((await setup(access)).statusCode).toBe(200);
    });

    it('disable_2fa needs the password and a current code or a backup code, and turns 2FA off', async () => {
      const disable = (access: string, body: Record<string, string>) =>
        t.request({ method: 'POST', url: '/service/disable_2fa/', token: access, body });
      const { email, access, seed, backupCodes } = await enrolledUser();
      const code = totpCode(seed, t.clock.now());
      expectError(await disable(access, { password: DEFAULT_PASSWORD }), 400, 'validation_failed');
      expect(
        fieldsOf(expectError(await disable(access, { password: 'not the password at all', otp: code }), 400)),
      ).toEqual(['password']);
      expect(
        fieldsOf(
          expectError(await disable(access, { password: DEFAULT_PASSWORD, otp: wrongCode(seed, t.clock.now()) }), 400),
        ),
      ).toEqual(['otp']);
      expect((await account(access)).json().two_factor_enabled).toBe(true);

      const off = await disable(access, { password: DEFAULT_PASSWORD, otp: backupCodes[0]! });
      expect(off.statusCode, off.body).toBe(200);
      expect((await account(access)).json().two_factor_enabled).toBe(false);
      expect((await postLogin({ email, password: DEFAULT_PASSWORD })).statusCode).toBe(200);
      // Its backup codes went with it.
      expectError(await disable(access, { password: DEFAULT_PASSWORD, otp: backupCodes[1]! }), 409, 'conflict');
    });

    it('new_backup_codes needs the password and a code, and replaces every earlier backup code', async () => {
      const renew = (access: string, body: Record<string, string>) =>
        t.request({ method: 'POST', url: '/service/new_backup_codes/', token: access, body });
      const { email, access, seed, backupCodes } = await enrolledUser();
      expect(
        fieldsOf(
          expectError(
            await renew(access, { password: 'not the password at all', otp: totpCode(seed, t.clock.now()) }),
            400,
          ),
        ),
      ).toEqual(['password']);
      const response = await renew(access, { password: DEFAULT_PASSWORD, otp: totpCode(seed, t.clock.now()) });
      expect(response.statusCode, response.body).toBe(200);
      const fresh = response.json().backup_codes as string[];
      expect(fresh).toHaveLength(10);
      expect(fresh.some((code) => backupCodes.includes(code))).toBe(false);

      expectError(await postLogin({ email, password: DEFAULT_PASSWORD, otp: backupCodes[0] }), 401, 'invalid_otp');
      expect((await postLogin({ email, password: DEFAULT_PASSWORD, otp: fresh[0] })).statusCode).toBe(200);

      const { email: other } = await newUser();
      expectError(
        await renew((await t.login(other)).access, { password: DEFAULT_PASSWORD, otp: '123456' }),
        409,
        'conflict',
      );
    });

    it('concurrent confirmations of one enrollment hand out only backup codes that work', async () => {
      // A double-click or a client retry sends verify_2fa_enrollment twice with the same code.
      const { email } = await newUser();
      const { access } = await t.login(email);
      const { seed } = (await setup(access)).json();
      const otp = totpCode(seed, t.clock.now());
      const responses = await Promise.all([1, 2, 3, 4, 5].map(() => verify(access, otp)));
      const succeeded = responses.filter((r) => r.statusCode === 200);
      expect(succeeded.length).toBeGreaterThanOrEqual(1);
      // A duplicate whose transaction lost the race gets 409. One that arrives after the winner has
      // committed carries an access token the enrollment has just revoked (enabling 2FA ends every
      // session opened before), so authentication answers 401 before the handler runs.
      for (const r of responses.filter((r) => r.statusCode !== 200)) {
        if (r.statusCode === 401) expect(expectError(r, 401, 'unauthorized').message).toBe('token has been revoked');
        else expectError(r, 409, 'conflict');
      }

      const handedOut = succeeded.map((r) => (r.json().backup_codes as string[])[0]!);
      const logins = [];
      for (const code of handedOut)
        logins.push((await postLogin({ email, password: DEFAULT_PASSWORD, otp: code })).statusCode);
      expect(logins, 'a backup code shown to the user is refused').toEqual(handedOut.map(() => 200));
    });

    it('login then needs a current TOTP, each code once, and the next step works', async () => {
      const { email, seed, enrollmentCode } = await enrolledUser();
      const password = DEFAULT_PASSWORD;

      const missing = expectError(await postLogin({ email, password }), 401, 'otp_required');
      expect(fieldsOf(missing)).toContain('otp');
      expectError(await postLogin({ email, password, otp: wrongCode(seed, t.clock.now()) }), 401);
      // The code used to enrol was spent there.
      expectError(await postLogin({ email, password, otp: enrollmentCode }), 401);

      const current = totpCode(seed, t.clock.now());
      const ok = await postLogin({ email, password, otp: current });
      expect(ok.statusCode, ok.body).toBe(200);
      expect(ok.json()).toEqual({ access: expect.any(String), refresh: expect.any(String) });

      // Replay of the same code within its window.
      expectError(await postLogin({ email, password, otp: current }), 401);

      t.clock.advance(TOTP_PERIOD_MS);
      const next = totpCode(seed, t.clock.now());
      expect((await postLogin({ email, password, otp: next })).statusCode).toBe(200);
    });

    it('accepts the code of the next step (one step of clock drift)', async () => {
      const { email, seed } = await enrolledUser();
      const response = await postLogin({ email, password: DEFAULT_PASSWORD, otp: nextStepCode(seed, t.clock.now()) });
      expect(response.statusCode).toBe(200);
    });

    it('a wrong password with 2FA is still an invalid-credentials 401, not a request for otp', async () => {
      const { email, seed } = await enrolledUser();
      const wrong = expectError(await postLogin({ email, password: 'not the password at all' }), 401);
      expect(wrong.code).not.toBe('otp_required');
      const withOtp = expectError(
        await postLogin({ email, password: 'not the password at all', otp: totpCode(seed, t.clock.now()) }),
        401,
      );
      expect(withOtp.code).toBe(wrong.code);
    });

    it('a backup code works once and only once', async () => {
      const { email, backupCodes } = await enrolledUser();
      const [first, second] = backupCodes;
      expect((await postLogin({ email, password: DEFAULT_PASSWORD, otp: first })).statusCode).toBe(200);
      expectError(await postLogin({ email, password: DEFAULT_PASSWORD, otp: first }), 401);
      expect((await postLogin({ email, password: DEFAULT_PASSWORD, otp: second })).statusCode).toBe(200);
    });

    it('of concurrent logins with one TOTP or one backup code, exactly one succeeds', async () => {
      const { email, seed, backupCodes } = await enrolledUser();
      for (const otp of [totpCode(seed, t.clock.now()), backupCodes[0]!]) {
        const responses = await Promise.all(
          [1, 2, 3, 4].map(() => postLogin({ email, password: DEFAULT_PASSWORD, otp })),
        );
        const statuses = responses.map((r) => r.statusCode).sort();
        // The losers are failures: once they pass the account's limit they answer 429, not 401.
        expect(
          statuses.filter((s) => s === 200),
          otp,
        ).toHaveLength(1);
        expect(
          statuses.every((s) => [200, 401, 429].includes(s)),
          `${otp}: ${statuses.join(',')}`,
        ).toBe(true);
      }
    });

    it('setup_2fa and verify_2fa_enrollment when 2FA is already on are 409', async () => {
      const { access, seed } = await enrolledUser();
      expectError(await setup(access), 409, 'conflict');
      expectError(await verify(access, totpCode(seed, t.clock.now())), 409, 'conflict');
    });
  });

  describe('new_password', () => {
    const change = (access: string, body: Record<string, string>) =>
      t.request({ method: 'POST', url: '/service/new_password/', token: access, body });

    it('with a wrong current password is 400 on field password', async () => {
      const { email } = await newUser();
      const { access } = await t.login(email);
      const body = expectError(
        await change(access, {
          password: 'not the password at all',
          new_password: NEW_PASSWORD,
          confirm_new_password: NEW_PASSWORD,
        }),
        400,
      );
      expect(fieldsOf(body)).toEqual(['password']);
      expect((await account(access)).statusCode).toBe(200);
    });

    it('with a confirmation that differs is 400 on field confirm_new_password', async () => {
      const { email } = await newUser();
      const { access } = await t.login(email);
      const body = expectError(
        await change(access, {
          password: DEFAULT_PASSWORD,
          new_password: NEW_PASSWORD,
          confirm_new_password: `${NEW_PASSWORD}!`,
        }),
        400,
      );
      expect(fieldsOf(body)).toEqual(['confirm_new_password']);
    });

    it('with a weak (short) new password is 400 on field new_password', async () => {
      const { email } = await newUser();
      const { access } = await t.login(email);
      const body = expectError(
        await change(access, { password: DEFAULT_PASSWORD, new_password: 'abc12', confirm_new_password: 'abc12' }),
        400,
      );
      expect(fieldsOf(body)).toEqual(['new_password']);
      // Nothing changed: the old password still logs in.
      expect((await postLogin({ email, password: DEFAULT_PASSWORD })).statusCode).toBe(200);
    });

    it('succeeds with new tokens; old tokens and the old password stop working', async () => {
      const { email } = await newUser();
      const old = await t.login(email);
      const response = await change(old.access, {
        password: DEFAULT_PASSWORD,
        new_password: NEW_PASSWORD,
        confirm_new_password: NEW_PASSWORD,
      });
      expect(response.statusCode).toBe(200);
      const fresh = response.json();
      expect(fresh).toMatchObject({ access: expect.any(String), refresh: expect.any(String) });

      expectError(await account(old.access), 401, 'unauthorized');
      expectError(await postRefresh(old.refresh), 401, 'unauthorized');
      expect((await account(fresh.access)).statusCode).toBe(200);
      expect((await postRefresh(fresh.refresh)).statusCode).toBe(200);

      expect((await postLogin({ email, password: NEW_PASSWORD })).statusCode).toBe(200);
      expectError(await postLogin({ email, password: DEFAULT_PASSWORD }), 401, 'invalid_credentials');
    });
  });
});

describe('login throttling', () => {
  const WINDOW_SECONDS = 600;
  const MAX_ADDRESS_DELAY_SECONDS = 8;
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({
      env: {
        DRAGNET_LOGIN_MAX_FAILURES_PER_ACCOUNT: '3',
        DRAGNET_LOGIN_MAX_FAILURES_PER_ADDRESS: '5',
        DRAGNET_LOGIN_ADDRESS_MAX_DELAY_SECONDS: String(MAX_ADDRESS_DELAY_SECONDS),
        DRAGNET_LOGIN_WINDOW_SECONDS: String(WINDOW_SECONDS),
      },
    });
    await t.createUser({ org: 'Acme', email: 'target@acme.test' });
    await t.createUser({ org: 'Acme', email: 'bystander@acme.test' });
    for (const name of [
      'racer',
      'owner',
      'plain',
      'paired',
      'session',
      'confirm',
      'enrolling',
      'regular',
      'traveller',
      'changer',
      'sixtyfour',
    ]) {
      await t.createUser({ org: 'Acme', email: `${name}@acme.test` });
    }
  });
  afterAll(() => t.close());

  const login = (email: string, password: string, remoteAddress: string, otp?: string) =>
    t.app.inject({
      method: 'POST',
      url: '/token/',
      payload: { email, password, ...(otp ? { otp } : {}) },
      remoteAddress,
    });

  function expectThrottled(response: Awaited<ReturnType<typeof login>>) {
    const body = expectError(response, 429, 'too_many_attempts');
    const retryAfter = Number(response.headers['retry-after']);
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(WINDOW_SECONDS);
    expect(body.retry_after_seconds).toBe(retryAfter);
    return retryAfter;
  }

  /** Enrols `email` in 2FA over HTTP (from an address of its own) and returns the seed. */
  async function enrol(email: string): Promise<string> {
    const { access } = (await login(email, DEFAULT_PASSWORD, '10.99.0.1')).json();
    const request = (url: string, payload: object) =>
      t.app.inject({
        method: 'POST',
        url,
        payload,
        headers: { authorization: `Bearer ${access}` },
        remoteAddress: '10.99.0.1',
      });
    const { seed } = (await request('/service/setup_2fa/', { password: DEFAULT_PASSWORD })).json();
    expect((await request('/service/verify_2fa_enrollment/', { otp: totpCode(seed, t.clock.now()) })).statusCode).toBe(
      200,
    );
    t.clock.advance(TOTP_PERIOD_MS);
    return seed;
  }

  it('slows an account attacked from many addresses down, but its right password with a valid second factor gets in at once', async () => {
    const seed = await enrol('owner@acme.test');
    // Each failure from its own address, so only the account-wide limit can be what slows down.
    for (const address of ['10.0.0.1', '10.0.0.2', '10.0.0.3']) {
      expectError(await login('owner@acme.test', 'not the password at all', address), 401, 'invalid_credentials');
    }
    expectThrottled(await login('owner@acme.test', 'not the password at all', '10.0.0.4'));
    // Without a second factor, or with a wrong one, the answer is the same 429: it tells nothing.
    expectThrottled(await login('owner@acme.test', DEFAULT_PASSWORD, '10.0.0.5'));
    expectThrottled(await login('owner@acme.test', DEFAULT_PASSWORD, '10.0.0.5', wrongCode(seed, t.clock.now())));
    expectThrottled(
      await login('owner@acme.test', 'not the password at all', '10.0.0.6', totpCode(seed, t.clock.now())),
    );

    const owner = await login('owner@acme.test', DEFAULT_PASSWORD, '10.0.0.7', totpCode(seed, t.clock.now()));
    expect(owner.statusCode, owner.body).toBe(200);
    // Another account is not affected.
    expect((await login('bystander@acme.test', DEFAULT_PASSWORD, '10.0.0.5')).statusCode).toBe(200);
  });

  it('slows an account without 2FA down for seconds, never locks it for the window', async () => {
    for (const address of ['10.0.1.1', '10.0.1.2', '10.0.1.3']) {
      expectError(await login('plain@acme.test', 'not the password at all', address), 401, 'invalid_credentials');
    }
    const wait = expectThrottled(await login('plain@acme.test', DEFAULT_PASSWORD, '10.0.1.5'));
    expect(wait).toBeLessThanOrEqual(MAX_ADDRESS_DELAY_SECONDS);
    t.clock.advance(wait * 1000);
    expect((await login('plain@acme.test', DEFAULT_PASSWORD, '10.0.1.5')).statusCode).toBe(200);
  });

  /** Wrong passwords for `email`, one from each address, past the account-wide limit (3). */
  async function slowDownFromElsewhere(email: string, addresses: string[]) {
    for (const address of addresses)
      expectError(await login(email, 'not the password at all', address), 401, 'invalid_credentials');
  }

  it('lets an account without 2FA in from an address it logged in from before, while strangers keep being slowed down', async () => {
    const home = '10.0.5.1';
    expect((await login('regular@acme.test', DEFAULT_PASSWORD, home)).statusCode).toBe(200);
    await slowDownFromElsewhere('regular@acme.test', ['10.0.5.11', '10.0.5.12', '10.0.5.13']);
    // One guess from a new address each time the delay ends would keep the owner out forever
    // if the delay applied to the owner's own address too.
    for (let round = 0; round < 4; round++) {
      const wait = expectThrottled(await login('regular@acme.test', 'not the password at all', `10.0.5.${20 + round}`));
      // A stranger's right password is held to the account's rate: it is no known address.
      expectThrottled(await login('regular@acme.test', DEFAULT_PASSWORD, `10.0.5.${30 + round}`));
      const owner = await login('regular@acme.test', DEFAULT_PASSWORD, home);
      expect(owner.statusCode, owner.body).toBe(200);
      t.clock.advance(wait * 1000);
      expectError(
        await login('regular@acme.test', 'not the password at all', `10.0.5.${40 + round}`),
        401,
        'invalid_credentials',
      );
    }
    // The known address still has its own count: guesses from there are held like any pair's.
    for (let i = 0; i < 3; i++)
      expectError(await login('regular@acme.test', 'not the password at all', home), 401, 'invalid_credentials');
    expectThrottled(await login('regular@acme.test', DEFAULT_PASSWORD, home));
  });

  it('forgets a known address 90 days after its last successful login', async () => {
    const home = '10.0.7.1';
    expect((await login('traveller@acme.test', DEFAULT_PASSWORD, home)).statusCode).toBe(200);
    t.clock.advance(91 * DAY_MS);
    await slowDownFromElsewhere('traveller@acme.test', ['10.0.7.11', '10.0.7.12', '10.0.7.13']);
    expectThrottled(await login('traveller@acme.test', DEFAULT_PASSWORD, home));
  });

  it('judges the current password a signed-in user confirms while the account is slowed down by others', async () => {
    const { access } = (await login('changer@acme.test', DEFAULT_PASSWORD, '10.0.6.1')).json();
    await slowDownFromElsewhere('changer@acme.test', ['10.0.6.11', '10.0.6.12', '10.0.6.13']);
    expectThrottled(await login('changer@acme.test', DEFAULT_PASSWORD, '10.0.6.14'));
    // From an address the account never logged in from, so only the session lets these through.
    const post = (url: string, payload: object) =>
      t.app.inject({
        method: 'POST',
        url,
        headers: { authorization: `Bearer ${access}` },
        payload,
        remoteAddress: '10.0.6.2',
      });
    const setup = await post('/service/setup_2fa/', { password: DEFAULT_PASSWORD });
    expect(setup.statusCode, setup.body).toBe(200);
    // A wrong one is judged too: 400 naming the field, not 429.
    expect(
      fieldsOf(
        expectError(
          await post('/service/new_password/', {
            password: 'not the password at all',
            new_password: NEW_PASSWORD,
            confirm_new_password: NEW_PASSWORD,
          }),
          400,
        ),
      ),
    ).toEqual(['password']);
    const change = await post('/service/new_password/', {
      password: DEFAULT_PASSWORD,
      new_password: NEW_PASSWORD,
      confirm_new_password: NEW_PASSWORD,
    });
    expect(change.statusCode, change.body).toBe(200);
  });

  it('counts the addresses of one IPv6 /64 as one address, and an IPv4-mapped address as the IPv4 one', async () => {
    // Address limit 5: five emails from five addresses of one /64, then a sixth address of it.
    for (let i = 1; i <= 5; i++)
      expectError(await login(`v6guess${i}@acme.test`, 'not the password at all', `2001:db8:7:1::${i}`), 401);
    expect(
      expectThrottled(await login('v6guess6@acme.test', 'not the password at all', '2001:db8:7:1:ffff:ffff:ffff:ffff')),
    ).toBe(1);
    expectError(
      await login('v6guess6@acme.test', 'not the password at all', '2001:db8:7:2::1'),
      401,
      'invalid_credentials',
    );

    for (let i = 1; i <= 5; i++)
      expectError(await login(`v4guess${i}@acme.test`, 'not the password at all', '::ffff:192.0.2.77'), 401);
    expect(expectThrottled(await login('v4guess6@acme.test', 'not the password at all', '192.0.2.77'))).toBe(1);

    // The pair count too: an account's three failures from one /64 hold a fourth address of it
    // even with the right password and code, which passes from another /64.
    const seed = await enrol('sixtyfour@acme.test');
    for (let i = 1; i <= 3; i++)
      expectError(await login('sixtyfour@acme.test', 'not the password at all', `2001:db8:8:1::${i}`), 401);
    expectThrottled(
      await login('sixtyfour@acme.test', DEFAULT_PASSWORD, '2001:db8:8:1::4', totpCode(seed, t.clock.now())),
    );
    const elsewhere = await login(
      'sixtyfour@acme.test',
      DEFAULT_PASSWORD,
      '2001:db8:8:2::1',
      totpCode(seed, t.clock.now()),
    );
    expect(elsewhere.statusCode, elsewhere.body).toBe(200);
  });

  it('holds one address to growing delays on one account, even with the right password and code; other addresses are not held', async () => {
    const seed = await enrol('paired@acme.test');
    const address = '10.0.2.1';
    for (let i = 0; i < 3; i++) expectError(await login('paired@acme.test', 'not the password at all', address), 401);
    expect(expectThrottled(await login('paired@acme.test', 'not the password at all', address))).toBe(1);
    t.clock.advance(1000);
    expectError(await login('paired@acme.test', 'not the password at all', address), 401, 'invalid_credentials');
    expect(
      expectThrottled(await login('paired@acme.test', DEFAULT_PASSWORD, address, totpCode(seed, t.clock.now()))),
    ).toBe(2);

    const elsewhere = await login('paired@acme.test', DEFAULT_PASSWORD, '10.0.2.2', totpCode(seed, t.clock.now()));
    expect(elsewhere.statusCode, elsewhere.body).toBe(200);
  });

  it('counts wrong current passwords at new_password like failed logins: a session gives no faster guessing', async () => {
    const { access } = (await login('session@acme.test', DEFAULT_PASSWORD, '10.0.3.1')).json();
    const change = (password: string) =>
      t.app.inject({
        method: 'POST',
        url: '/service/new_password/',
        headers: { authorization: `Bearer ${access}` },
        payload: {
          password,
          new_password: 'a much better passphrase 42',
          confirm_new_password: 'a much better passphrase 42',
        },
        remoteAddress: '10.0.3.2',
      });
    const statuses = [];
    for (let i = 0; i < 10; i++) statuses.push((await change(`guess number ${i}`)).statusCode);
    expect(statuses).toEqual([400, 400, 400, 429, 429, 429, 429, 429, 429, 429]);
    // The right password is not judged either while the delay runs, and /token/ shares the count.
    const wait = expectThrottled(await change(DEFAULT_PASSWORD));
    expectThrottled(await login('session@acme.test', DEFAULT_PASSWORD, '10.0.3.2'));
    t.clock.advance(wait * 1000);
    expect((await change(DEFAULT_PASSWORD)).statusCode).toBe(200);
  });

  it('counts wrong passwords at setup_2fa, disable_2fa and new_backup_codes in the same throttle', async () => {
    const seed = await enrol('confirm@acme.test');
    const { access } = (
      await login('confirm@acme.test', DEFAULT_PASSWORD, '10.0.4.1', totpCode(seed, t.clock.now()))
    ).json();
    const post = (url: string, password: string) =>
      t.app.inject({
        method: 'POST',
        url,
        headers: { authorization: `Bearer ${access}` },
        payload: { password, otp: totpCode(seed, t.clock.now()) },
        remoteAddress: '10.0.4.2',
      });
    expect((await post('/service/disable_2fa/', 'not the password at all')).statusCode).toBe(400);
    expect((await post('/service/new_backup_codes/', 'not the password at all')).statusCode).toBe(400);
    expect((await post('/service/disable_2fa/', 'not the password at all')).statusCode).toBe(400);
    expectThrottled(await post('/service/new_backup_codes/', DEFAULT_PASSWORD));
    expectThrottled(await post('/service/disable_2fa/', DEFAULT_PASSWORD));

    const { access: plain } = (await login('enrolling@acme.test', DEFAULT_PASSWORD, '10.0.4.3')).json();
    const setup = (password: string) =>
      t.app.inject({
        method: 'POST',
        url: '/service/setup_2fa/',
        headers: { authorization: `Bearer ${plain}` },
        payload: { password },
        remoteAddress: '10.0.4.3',
      });
    for (let i = 0; i < 3; i++) expect((await setup('not the password at all')).statusCode).toBe(400);
    expectThrottled(await setup(DEFAULT_PASSWORD));
  });

  it('slows an address down after failures across different emails instead of locking everyone behind it out', async () => {
    const address = '192.0.2.7';
    for (let i = 1; i <= 5; i++) {
      expectError(await login(`guess${i}@acme.test`, 'not the password at all', address), 401, 'invalid_credentials');
    }
    // Past the address limit, the next attempt must come 1 s after the last failure, 2 s after
    // the next one, 4 s... (up to DRAGNET_LOGIN_ADDRESS_MAX_DELAY_SECONDS); one sooner is not judged.
    expect(expectThrottled(await login('guess6@acme.test', 'not the password at all', address))).toBe(1);
    t.clock.advance(1000);
    expectError(await login('guess6@acme.test', 'not the password at all', address), 401, 'invalid_credentials');
    expect(expectThrottled(await login('guess7@acme.test', 'not the password at all', address))).toBe(2);

    // A colleague behind the same address, with the right password, waits that delay and no more.
    const wait = expectThrottled(await login('bystander@acme.test', DEFAULT_PASSWORD, address));
    expect(wait).toBeLessThanOrEqual(2);
    t.clock.advance(wait * 1000);
    expect((await login('bystander@acme.test', DEFAULT_PASSWORD, address)).statusCode).toBe(200);
    // Other addresses were never slowed down.
    expect((await login('bystander@acme.test', DEFAULT_PASSWORD, '192.0.2.8')).statusCode).toBe(200);
  });

  it('keeps the delay of an attacking address bounded, so the right password always gets in after it', async () => {
    const address = '192.0.2.9';
    const attack = async (i: number) => {
      const response = await login(`spray${i}@acme.test`, 'not the password at all', address);
      if (response.statusCode === 429) {
        const wait = expectThrottled(response);
        expect(wait).toBeLessThanOrEqual(MAX_ADDRESS_DELAY_SECONDS);
        t.clock.advance(wait * 1000);
        expectError(await login(`spray${i}@acme.test`, 'not the password at all', address), 401, 'invalid_credentials');
      } else {
        expectError(response, 401, 'invalid_credentials');
      }
    };
    // Far more failures than the address limit: the delay doubles up to its cap and stays there.
    for (let i = 1; i <= 15; i++) await attack(i);
    const wait = expectThrottled(await login('bystander@acme.test', DEFAULT_PASSWORD, address));
    expect(wait).toBe(MAX_ADDRESS_DELAY_SECONDS);
    t.clock.advance(wait * 1000);
    expect((await login('bystander@acme.test', DEFAULT_PASSWORD, address)).statusCode).toBe(200);
    // A success takes no turn from the attacker, and does not reset the address either: the next
    // failure is again followed by the longest delay.
    expectError(await login('spray16@acme.test', 'not the password at all', address), 401, 'invalid_credentials');
    expect(expectThrottled(await login('spray17@acme.test', 'not the password at all', address))).toBe(
      MAX_ADDRESS_DELAY_SECONDS,
    );
  });

  it('judges at most one of many guesses sent at once from an address past its limit', async () => {
    const address = '192.0.2.10';
    for (let i = 1; i <= 5; i++)
      expectError(await login(`flood${i}@acme.test`, 'not the password at all', address), 401);
    t.clock.advance(MAX_ADDRESS_DELAY_SECONDS * 1000);
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) => login(`burst${i}@acme.test`, 'not the password at all', address)),
    );
    const statuses = responses.map((r) => r.statusCode);
    expect(statuses.filter((s) => s === 401).length, statuses.join(',')).toBeLessThanOrEqual(1);
    expect(statuses.filter((s) => s === 429).length, statuses.join(',')).toBeGreaterThanOrEqual(9);
  });

  it('ignores X-Forwarded-For by default, so a client cannot pose as many addresses', async () => {
    const address = '198.51.100.9';
    const spoofing = (email: string, password: string, i: number) =>
      t.app.inject({
        method: 'POST',
        url: '/token/',
        payload: { email, password },
        remoteAddress: address,
        headers: { 'x-forwarded-for': `203.0.113.${i}` },
      });
    for (let i = 1; i <= 5; i++) expectError(await spoofing(`spoof${i}@acme.test`, 'not the password at all', i), 401);
    // Judged as the one real address: past its limit, so slowed down whatever the header says.
    expectThrottled(await spoofing('spoof6@acme.test', 'not the password at all', 99));
  });

  it('concurrent guesses cannot get more password checks than the limit', async () => {
    // Twelve guesses sent at once (from different addresses): at most three may be judged,
    // the rest must be refused before the password is checked.
    const responses = await Promise.all(
      Array.from({ length: 12 }, (_, i) => login('racer@acme.test', `guess number ${i}`, `10.7.0.${i + 1}`)),
    );
    const statuses = responses.map((r) => r.statusCode);
    expect(statuses.filter((s) => s === 401).length, statuses.join(',')).toBeLessThanOrEqual(3);
    expect(statuses.filter((s) => s === 429).length, statuses.join(',')).toBeGreaterThanOrEqual(9);
  });

  it('keeps counting in the store: a second app on the same store sees the slow-down', async () => {
    for (const address of ['10.9.0.1', '10.9.0.2', '10.9.0.3']) {
      expectError(await login('bystander@acme.test', 'not the password at all', address), 401);
    }
    const other = await createTestApp({
      location: t.location,
      clock: t.clock,
      env: { DRAGNET_LOGIN_MAX_FAILURES_PER_ACCOUNT: '3', DRAGNET_LOGIN_WINDOW_SECONDS: String(WINDOW_SECONDS) },
    });
    try {
      const response = await other.app.inject({
        method: 'POST',
        url: '/token/',
        payload: { email: 'bystander@acme.test', password: DEFAULT_PASSWORD },
        remoteAddress: '10.9.0.4',
      });
      expectThrottled(response);
    } finally {
      await other.close();
    }
  });
});
