import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import { epochMs, type Clock } from '../../lib/clock.ts';

const SETTING = 'dashboard_url';

/**
 * The base of notification links for organizations that set no dashboard_url:
 * DRAGNET_DASHBOARD_URL, else the address the server runs at. `dragnet serve` records that
 * address in the store, so the CLI (`rules tick` from cron, without the server's HOST and PORT)
 * and workers link to the same dashboard instead of their own default of 127.0.0.1:8080.
 */
export function createDashboardAddress(deps: {
  db: Kysely<Database>;
  clock: Clock;
  configured: string | undefined;
  ownServerUrl: string;
}) {
  const { db, clock, configured } = deps;
  let url = configured ?? deps.ownServerUrl;
  return {
    get url(): string {
      return url;
    },
    /** Takes the address a server recorded, unless this process was given one. */
    async load(): Promise<void> {
      if (configured) return;
      const recorded = await db
        .selectFrom('server_settings')
        .select('value')
        .where('name', '=', SETTING)
        .executeTakeFirst();
      if (recorded) url = recorded.value;
    },
    /** A server's: links point at `serverUrl` (where it listens) unless DRAGNET_DASHBOARD_URL says otherwise. */
    async record(serverUrl: string): Promise<void> {
      url = configured ?? serverUrl;
      const updatedAt = epochMs(clock);
      await db
        .insertInto('server_settings')
        .values({ name: SETTING, value: url, updated_at: updatedAt })
        .onConflict((conflict) => conflict.column('name').doUpdateSet({ value: url, updated_at: updatedAt }))
        .execute();
    },
  };
}
