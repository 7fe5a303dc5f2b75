import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { brotliCompressSync, brotliDecompressSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/test-app.ts';

/** A dashboard build as Vite writes it: index.html, hashed assets, precompressed copies. */
function fixtureBuild(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'dragnet-dashboard-'));
  mkdirSync(path.join(dir, 'assets'));
  writeFileSync(
    path.join(dir, 'index.html'),
    '<!doctype html><title>Dragnet</title><script type="module" src="/assets/index-Ab12Cd34.js"></script>',
  );
  const script = `console.log(${JSON.stringify('dashboard '.repeat(200))});`;
  writeFileSync(path.join(dir, 'assets', 'index-Ab12Cd34.js'), script);
  writeFileSync(path.join(dir, 'assets', 'index-Ab12Cd34.js.br'), brotliCompressSync(script));
  return dir;
}

/** What a browser sends when it opens a page. */
const BROWSER = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };

const isJsonNotFound = (response: { statusCode: number; headers: Record<string, unknown>; json(): { code: string } }) =>
  response.statusCode === 404 &&
  String(response.headers['content-type']).startsWith('application/json') &&
  response.json().code === 'not_found';

describe('the dashboard served at /', () => {
  let t: TestApp;
  let dir: string;

  beforeAll(async () => {
    dir = fixtureBuild();
    t = await createTestApp({ env: { DRAGNET_DASHBOARD_DIR: dir } });
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves index.html at / to be revalidated on every load, with a content security policy', async () => {
    const response = await t.request({ method: 'GET', url: '/' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/html/);
    expect(response.headers['cache-control']).toBe('no-cache');
    expect(response.headers['content-security-policy']).toContain("script-src 'self'");
    expect(response.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(response.body).toContain('/assets/index-Ab12Cd34.js');
  });

  it.each([
    '/search',
    '/search/history?page=2',
    '/settings/security',
    '/sign-in?redirect=%2Fsearch',
    '/rules/new?service=1',
  ])('answers the app route %s with index.html', async (url) => {
    const response = await t.request({ method: 'GET', url, headers: BROWSER });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/html/);
    expect(response.headers['cache-control']).toBe('no-cache');
    expect(response.body).toContain('<title>Dragnet</title>');
  });

  it('answers HEAD of an app route too', async () => {
    const response = await t.request({ method: 'HEAD', url: '/search', headers: BROWSER });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/html/);
  });

  it('serves hashed assets as immutable for a year, precompressed when the client takes it', async () => {
    const plain = await t.request({
      method: 'GET',
      url: '/assets/index-Ab12Cd34.js',
      headers: { 'accept-encoding': 'identity' },
    });
    expect(plain.statusCode).toBe(200);
    expect(plain.headers['content-type']).toMatch(/javascript/);
    expect(plain.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(plain.headers['content-encoding']).toBeUndefined();

    const brotli = await t.request({
      method: 'GET',
      url: '/assets/index-Ab12Cd34.js',
      headers: { 'accept-encoding': 'gzip, br' },
    });
    expect(brotli.statusCode).toBe(200);
    expect(brotli.headers['content-encoding']).toBe('br');
    expect(brotli.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(brotliDecompressSync(brotli.rawPayload).toString()).toBe(plain.body);
    // Both answers say they depend on Accept-Encoding, so a shared cache keeps them apart.
    expect(plain.headers.vary).toBe('Accept-Encoding');
    expect(brotli.headers.vary).toBe('Accept-Encoding');
  });

  it('answers a missing asset with the JSON 404, not the app', async () => {
    const response = await t.request({ method: 'GET', url: '/assets/index-Gone0000.js', headers: BROWSER });
    expect(isJsonNotFound(response)).toBe(true);
  });

  it.each([
    '/service/',
    '/service/nope',
    '/service/a/b/c/',
    '/service/*',
    '/service/a*b/c',
    '/service/:id/',
    '/token/*',
    '/assets/',
    '/assets',
    '/assets/x.js',
    '/assets/*',
    '/assets/../x',
  ])('answers the odd path %s with the JSON 404, never a 500 nor the app', async (url) => {
    for (const headers of [{}, BROWSER]) {
      const response = await t.request({ method: 'GET', url, headers });
      // light-my-request resolves dot segments as a browser does: /assets/../x is the app route /x.
      if (url === '/assets/../x' && headers === BROWSER) expect(response.statusCode).toBe(200);
      else expect(isJsonNotFound(response), `${response.statusCode} ${response.body.slice(0, 200)}`).toBe(true);
    }
  });

  it('answers an API client that gets a path wrong with the JSON 404, not a page', async () => {
    for (const accept of [undefined, '*/*', 'application/json']) {
      const response = await t.request({ method: 'GET', url: '/search', headers: accept ? { accept } : {} });
      expect(isJsonNotFound(response), `accept ${accept}`).toBe(true);
    }
  });

  it.each([
    '/service/no-such-thing/',
    '/service/',
    '/token/nope/',
    '/docs/nope/deeper',
    '/openapi.json/x',
    '/metrics/x',
    '/readyz/x',
    '/healthz/x',
    '/ingest/nope/',
  ])('keeps the JSON 404 for the unknown API path %s', async (url) => {
    const response = await t.request({ method: 'GET', url, headers: BROWSER });
    expect(isJsonNotFound(response), `${response.statusCode} ${response.body.slice(0, 200)}`).toBe(true);
  });

  it('keeps the API answers: a JSON route, 405 for a known path with another method, 404 for other methods on app routes', async () => {
    const health = await t.request({ method: 'GET', url: '/healthz' });
    expect(health.statusCode).toBe(200);
    expect(health.json()).toMatchObject({ status: 'ok' });

    const wrongMethod = await t.request({ method: 'GET', url: '/token/' });
    expect(wrongMethod.statusCode).toBe(405);
    expect(wrongMethod.headers.allow).toBe('POST');

    const post = await t.request({ method: 'POST', url: '/search', body: {}, headers: BROWSER });
    expect(isJsonNotFound(post)).toBe(true);
  });

  it('leaves the dashboard files out of the OpenAPI document', async () => {
    const spec = (await t.request({ method: 'GET', url: '/openapi.json' })).json() as {
      paths: Record<string, unknown>;
    };
    expect(Object.keys(spec.paths).filter((p) => !p.startsWith('/service/') && !p.startsWith('/token/'))).not.toContain(
      '/',
    );
    expect(Object.keys(spec.paths).some((p) => p.startsWith('/assets/'))).toBe(false);
  });
});

describe('a server whose dashboard is not built', () => {
  let t: TestApp;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'dragnet-dashboard-empty-'));
    t = await createTestApp({ env: { DRAGNET_DASHBOARD_DIR: dir } });
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('says how to build it on an app route, and answers the API as before', async () => {
    const page = await t.request({ method: 'GET', url: '/search', headers: BROWSER });
    expect(isJsonNotFound(page)).toBe(true);
    expect(page.json().message).toContain('npm run build:web');

    const api = await t.request({ method: 'GET', url: '/service/no-such-thing/', headers: BROWSER });
    expect(isJsonNotFound(api)).toBe(true);
    expect(api.json().message).not.toContain('build:web');
  });
});
