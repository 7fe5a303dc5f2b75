import { expect } from 'vitest';
import type { TestApp } from '../support/test-app.ts';

export const CREATE_PATH = '/service/alert_system_api_key_create/';
export const LIST_PATH = '/service/alert_system_api_key_list/';
export const revokePath = (id: number) => `/service/alert_system_api_key_revoke/${id}/`;

export interface ApiKeyBody {
  id: number;
  name: string;
  scope: string;
  prefix: string;
  status: string;
  created_at: string;
  created_by: string | null;
  expires_at: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
  revoked_by: string | null;
}

export interface CreatedKey extends ApiKeyBody {
  key: string;
}

/** HTTP Basic credentials: how a client that speaks only Basic (TAXII, MISP) sends an API key. */
export const basicAuthorization = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;

/** Creates a key over HTTP with a person's token; must be 201. */
export async function createKey(
  t: TestApp,
  token: string,
  body: { name: string; scope?: 'read' | 'read_write'; expires_at?: string | null },
  headers?: Record<string, string>,
): Promise<CreatedKey> {
  const response = await t.request({ method: 'POST', url: CREATE_PATH, token, body, headers });
  expect(response.statusCode, response.body).toBe(201);
  return response.json() as CreatedKey;
}
