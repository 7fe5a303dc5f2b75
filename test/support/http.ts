import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';

export interface ErrorBody {
  code: string;
  message: string;
  request_id: string;
  fields?: { field: string; message: string }[];
  [key: string]: unknown;
}

/**
 * Asserts the shape every error response shares: the status, a JSON body with `code`, `message`
 * and `request_id`, and an `x-request-id` header equal to that `request_id`. Returns the body.
 */
export function expectError(response: LightMyRequestResponse, status: number, code?: string): ErrorBody {
  expect(response.statusCode, response.body).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  const body = response.json() as ErrorBody;
  expect(body).toMatchObject({ code: expect.any(String), message: expect.any(String), request_id: expect.any(String) });
  expect(body.message.length).toBeGreaterThan(0);
  expect(body.request_id.length).toBeGreaterThan(0);
  expect(response.headers['x-request-id']).toBe(body.request_id);
  if (code !== undefined) expect(body.code).toBe(code);
  return body;
}

/** The field names an error body blames. */
export function fieldsOf(body: ErrorBody): string[] {
  return (body.fields ?? []).map((f) => f.field);
}
