import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/test-app.ts';

interface Operation {
  operationId?: string;
  security?: Record<string, string[]>[];
  responses?: Record<string, unknown>;
}
type OpenApi = {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components?: { securitySchemes?: Record<string, { type: string; scheme?: string }> };
};

const trunkOperations = [
  ['/token/', 'post'],
  ['/token/refresh/', 'post'],
  ['/service/setup_2fa/', 'post'],
  ['/service/verify_2fa_enrollment/', 'post'],
  ['/service/new_password/', 'post'],
  ['/service/organization/', 'get'],
  ['/service/organizations/', 'get'],
  ['/service/account/', 'get'],
] as const;

describe('API description and operations endpoints', () => {
  let t: TestApp;
  let spec: OpenApi;

  beforeAll(async () => {
    t = await createTestApp();
    const response = await t.request({ method: 'GET', url: '/openapi.json' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    spec = response.json();
  });
  afterAll(() => t.close());

  const operations = () =>
    Object.entries(spec.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => ({ path, method, op })),
    );

  it('is OpenAPI 3.1', () => {
    expect(spec.openapi).toMatch(/^3\.1\.\d+$/);
  });

  it.each(trunkOperations)('describes %s (%s) with an operationId', (path, method) => {
    const op = spec.paths[path]?.[method];
    expect(op, `${method} ${path}`).toBeDefined();
    expect(op!.operationId).toMatch(/^\w+$/);
  });

  it('gives every operation a unique operationId', () => {
    const ids = operations().map(({ op }) => op.operationId);
    expect(ids.every((id) => typeof id === 'string' && id.length > 0)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('declares bearer security on /service/ operations and none on login and refresh', () => {
    const schemes = spec.components?.securitySchemes ?? {};
    const bearerNames = Object.entries(schemes)
      .filter(([, scheme]) => scheme.type === 'http' && scheme.scheme?.toLowerCase() === 'bearer')
      .map(([name]) => name);
    expect(bearerNames.length).toBe(1);

    const service = operations().filter(({ path }) => path.startsWith('/service/'));
    expect(service.length).toBeGreaterThanOrEqual(6);
    for (const { path, method, op } of service) {
      const names = (op.security ?? []).flatMap((requirement) => Object.keys(requirement));
      expect(names, `${method} ${path}`).toContain(bearerNames[0]);
    }
    for (const path of ['/token/', '/token/refresh/']) {
      expect(spec.paths[path]!.post!.security ?? []).toEqual([]);
    }
  });

  it('lists every path with its trailing slash', () => {
    const apiPaths = Object.keys(spec.paths).filter(
      (path) => path.startsWith('/service/') || path.startsWith('/token'),
    );
    for (const path of apiPaths) expect(path).toMatch(/\/$/);
  });

  it('serves the documentation as HTML at /docs/ and /docs', async () => {
    for (const url of ['/docs/', '/docs']) {
      const response = await t.request({ method: 'GET', url });
      expect(response.statusCode, url).toBe(200);
      expect(response.headers['content-type']).toMatch(/^text\/html/);
      expect(response.body).toMatch(/<html/i);
    }
  });

  it('answers /healthz and /readyz without a token', async () => {
    const health = await t.request({ method: 'GET', url: '/healthz' });
    expect(health.statusCode).toBe(200);
    expect(health.json().status).toBe('ok');

    const ready = await t.request({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toMatchObject({ status: 'ready', store: t.container.store.engine });
  });
});

describe('readiness without a store', () => {
  it('/readyz is 503 once the store is gone, while /healthz stays 200', async () => {
    const t = await createTestApp();
    try {
      await t.container.store.close();
      const ready = await t.request({ method: 'GET', url: '/readyz' });
      expect(ready.statusCode).toBe(503);
      expect(ready.json().status).not.toBe('ready');
      expect((await t.request({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    } finally {
      await t.app.close();
      await t.location.drop();
    }
  });
});
