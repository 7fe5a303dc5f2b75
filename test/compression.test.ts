import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPRESSION_THRESHOLD_BYTES, chooseEncoding, POOLED_COMPRESSION_BYTES } from '../src/http/compression.ts';
import { deliveryApi, settingPath, templateBody, VALID_TEMPLATE_BODY } from './support/delivery-api.ts';
import { createTestApp, type TestApp } from './support/test-app.ts';

const CATALOG = '/service/alert_system_service_get_service_list/';

describe('JSON answers compressed for clients that take it', () => {
  let t: TestApp;
  let token: string;
  let orgId: number;

  beforeAll(async () => {
    t = await createTestApp();
    orgId = (await t.createUser({ org: 'acme', email: 'ana@acme.test' })).org_id;
    token = (await t.login('ana@acme.test')).access;
  });
  afterAll(() => t.close());

  const get = (url: string, acceptEncoding?: string) =>
    t.request({ method: 'GET', url, token, headers: acceptEncoding ? { 'accept-encoding': acceptEncoding } : {} });

  it('sends a large answer as brotli or gzip, whichever the client prefers, with Vary', async () => {
    const plain = await get(CATALOG);
    expect(plain.statusCode).toBe(200);
    expect(plain.rawPayload.length).toBeGreaterThan(COMPRESSION_THRESHOLD_BYTES);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers.vary).toBe('Accept-Encoding');

    const brotli = await get(CATALOG, 'gzip, deflate, br');
    expect(brotli.headers['content-encoding']).toBe('br');
    expect(brotli.headers.vary).toBe('Accept-Encoding');
    expect(brotli.headers['content-type']).toMatch(/^application\/json/);
    expect(Number(brotli.headers['content-length'])).toBe(brotli.rawPayload.length);
    expect(brotli.rawPayload.length).toBeLessThan(plain.rawPayload.length / 2);
    expect(brotliDecompressSync(brotli.rawPayload).toString()).toBe(plain.body);

    const gzipped = await get(CATALOG, 'br;q=0.5, gzip');
    expect(gzipped.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gzipped.rawPayload).toString()).toBe(plain.body);
  });

  it('sends it as it is to a client that takes neither', async () => {
    for (const accept of ['identity', 'deflate', 'br;q=0, gzip;q=0', '*;q=0']) {
      const response = await get(CATALOG, accept);
      expect(response.headers['content-encoding'], accept).toBeUndefined();
      expect(response.json()).toEqual(JSON.parse((await get(CATALOG)).body));
    }
  });

  it('leaves small answers and errors under the threshold alone', async () => {
    const account = await get('/service/account/', 'br, gzip');
    expect(account.statusCode).toBe(200);
    expect(account.rawPayload.length).toBeLessThan(COMPRESSION_THRESHOLD_BYTES);
    expect(account.headers['content-encoding']).toBeUndefined();
    expect(account.headers.vary).toBeUndefined();

    const missing = await get('/service/nope/', 'br, gzip');
    expect(missing.statusCode).toBe(404);
    expect(missing.headers['content-encoding']).toBeUndefined();
  });

  it('measures the threshold in bytes: an answer of fewer characters but more bytes is compressed', async () => {
    // Cyrillic letters are two bytes each in UTF-8.
    const template = templateBody('кириллица', { body: `${VALID_TEMPLATE_BODY}${'ж'.repeat(400)}` });
    await deliveryApi(t, token, orgId).created('template', template);
    const list = await get(settingPath('get_template_list'), 'br');
    expect(list.headers['content-encoding']).toBe('br');
    const text = brotliDecompressSync(list.rawPayload).toString();
    expect(text.length).toBeLessThan(COMPRESSION_THRESHOLD_BYTES);
    expect(Buffer.byteLength(text)).toBeGreaterThanOrEqual(COMPRESSION_THRESHOLD_BYTES);
  });

  it('compresses answers on either side of the thread-pool size alike', async () => {
    const catalog = await get(CATALOG);
    expect(catalog.rawPayload.length).toBeLessThan(POOLED_COMPRESSION_BYTES);
    const template = templateBody('large', { body: `${VALID_TEMPLATE_BODY}${'x'.repeat(POOLED_COMPRESSION_BYTES)}` });
    await deliveryApi(t, token, orgId).created('template', template);
    const templates = await get(settingPath('get_template_list'));
    expect(templates.rawPayload.length).toBeGreaterThan(POOLED_COMPRESSION_BYTES);
    for (const [url, plain] of [
      [CATALOG, catalog],
      [settingPath('get_template_list'), templates],
    ] as const) {
      const brotli = await get(url, 'br');
      expect(brotli.headers['content-encoding']).toBe('br');
      expect(brotliDecompressSync(brotli.rawPayload).toString()).toBe(plain.body);
      const gzipped = await get(url, 'gzip');
      expect(gzipped.headers['content-encoding']).toBe('gzip');
      expect(gunzipSync(gzipped.rawPayload).toString()).toBe(plain.body);
    }
  });

  it('picks the encoding from the header', () => {
    expect(chooseEncoding(undefined)).toBeUndefined();
    expect(chooseEncoding('gzip, br')).toBe('br');
    expect(chooseEncoding('GZIP')).toBe('gzip');
    expect(chooseEncoding('gzip;q=1, br;q=0.8')).toBe('gzip');
    expect(chooseEncoding('*')).toBe('br');
    expect(chooseEncoding('br;q=0, *')).toBe('gzip');
    expect(chooseEncoding('deflate')).toBeUndefined();
  });
});
