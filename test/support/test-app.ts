import { rmSync } from 'node:fs';
import type { LightMyRequestResponse } from 'fastify';
import { buildApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createContainer, type Container } from '../../src/container.ts';
import type { Log } from '../../src/lib/log.ts';
import { createManualClock, type ManualClock } from '../../src/lib/clock.ts';
import { createTestStoreLocation, type TestStoreLocation } from './test-store.ts';

export const DEFAULT_PASSWORD = 'correct horse battery staple';

export interface TestApp {
  app: App;
  container: Container;
  clock: ManualClock;
  location: TestStoreLocation;
  /** Creates a user (and its organization) through the same service the CLI uses. */
  createUser(input: {
    org: string;
    email: string;
    password?: string;
    role?: 'member' | 'system';
  }): Promise<{ id: number; org_id: number }>;
  /** Logs in over HTTP and returns the token pair. */
  login(email: string, password?: string, otp?: string): Promise<{ access: string; refresh: string }>;
  /** Sends a request with `Authorization: Bearer <token>`. */
  request(options: {
    method: string;
    url: string;
    token?: string;
    body?: unknown;
    headers?: Record<string, string>;
  }): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

// Migrating a fresh store is most of an app's start on PostgreSQL (seconds of DDL): the schema is
// made once per test process, in a template store that each fresh store is copied from.
let migratedTemplate: Promise<TestStoreLocation> | undefined;

export function migratedStoreTemplate(): Promise<TestStoreLocation> {
  migratedTemplate ??= (async () => {
    const template = await createTestStoreLocation({ isTemplate: true });
    const container = await createContainer(loadConfig(template.env));
    await container.close();
    process.once('exit', () => rmSync(template.dataDir, { recursive: true, force: true }));
    return template;
  })();
  return migratedTemplate;
}

/**
 * A real app on a real, fresh store (SQLite or PostgreSQL), driven through app.inject. Pass
 * `location` to open an existing store instead (e.g. one the CLI wrote); it is then left in place.
 */
export async function createTestApp(
  options: { env?: Record<string, string>; clock?: ManualClock; location?: TestStoreLocation; log?: Log } = {},
): Promise<TestApp> {
  const ownsLocation = !options.location;
  const location = options.location ?? (await createTestStoreLocation({ template: await migratedStoreTemplate() }));
  const clock = options.clock ?? createManualClock('2026-03-10T09:00:00Z');
  const config = loadConfig({ ...location.env, ...options.env });
  const container = await createContainer(config, { clock, log: options.log });
  const app = await buildApp(container);

  const request: TestApp['request'] = ({ method, url, token, body, headers }) =>
    app.inject({
      method: method as 'GET',
      url,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
      ...(body === undefined ? {} : { payload: body as object }),
    });

  return {
    app,
    container,
    clock,
    location,
    async createUser({ org, email, password = DEFAULT_PASSWORD, role }) {
      return container.users.create({ orgName: org, email, password, role });
    },
    async login(email, password = DEFAULT_PASSWORD, otp) {
      const response = await request({
        method: 'POST',
        url: '/token/',
        body: { email, password, ...(otp ? { otp } : {}) },
      });
      if (response.statusCode !== 200) throw new Error(`login failed: ${response.statusCode} ${response.body}`);
      return response.json();
    },
    request,
    async close() {
      await app.close();
      await container.close();
      if (ownsLocation) await location.drop();
    },
  };
}
