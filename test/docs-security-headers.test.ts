import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/test-app.ts';

/** The API documentation is a page like the dashboard: guarded by the same headers. */
describe('security headers of /docs and /openapi.json', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  const expectGuarded = (headers: Record<string, unknown>, url: string) => {
    const policy = String(headers['content-security-policy'] ?? '');
    expect(policy, url).toContain("default-src 'self'");
    expect(policy, url).toContain("script-src 'self'");
    expect(policy, url).toContain("frame-ancestors 'none'");
    expect(policy, url).toContain("object-src 'none'");
    expect(policy, url).not.toContain('unsafe');
    expect(headers['x-content-type-options'], url).toBe('nosniff');
    expect(headers['referrer-policy'], url).toBe('no-referrer');
    expect(headers['x-frame-options'], url).toBe('DENY');
  };

  it('guards the documentation page, every file it loads and the OpenAPI document', async () => {
    const page = await t.request({ method: 'GET', url: '/docs/' });
    expect(page.statusCode).toBe(200);
    expectGuarded(page.headers, '/docs/');

    // The policy allows scripts and styles from the server only, and no inline script: the
    // page works under it when every script and style it names is a file of the same origin.
    const scripts = [...page.body.matchAll(/<script\b[^>]*>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [tag, inline] of scripts) {
      expect(inline!.trim(), tag).toBe('');
      expect(tag).toMatch(/\ssrc="\.\/static\//);
    }
    const files = [...page.body.matchAll(/(?:src|href)="\.\/(static\/[^"]+)"/g)].map((m) => `/docs/${m[1]}`);
    expect(files.some((file) => file.endsWith('.css'))).toBe(true);
    for (const url of [...files, '/docs', '/docs/json', '/openapi.json']) {
      const response = await t.request({ method: 'GET', url });
      expect(response.statusCode, url).toBe(200);
      expectGuarded(response.headers, url);
    }
  });

  it('guards the API errors under /docs too', async () => {
    const missing = await t.request({ method: 'GET', url: '/docs/static/nope.js' });
    expect(missing.statusCode).toBe(404);
    expectGuarded(missing.headers, '/docs/static/nope.js');
  });
});
