import type { Kysely } from 'kysely';

// Landed migrations are never edited: add a new numbered file instead.
//
// The addresses each user logged in from (docs/api.md "Login throttling"): an address key (an
// IPv4 address or an IPv6 /64) from which the account logged in within the last 90 days is
// exempt from the account-wide login delay, so guesses spread over many addresses slow
// strangers down without keeping the owner out. Kept in the store so every API process sees it.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('known_login_addresses')
    .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('address_key', 'text', (c) => c.notNull())
    .addColumn('last_success_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('known_login_addresses_pk', ['user_id', 'address_key'])
    .execute();
}
