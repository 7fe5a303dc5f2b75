import { connect } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { channel, loadCorpus, message } from '../support/corpus.ts';
import { SEARCH_PATH, type ListBody } from '../support/messenger-search.ts';
import { dailyOf, usage } from '../support/rate-limits.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';
import { testEngine } from '../support/test-store.ts';
import { scaled, waitFor } from '../support/wait.ts';

/**
 * A search whose client goes away (docs/api.md "Abandoned requests"): its statements stop in
 * the store, it is not charged against the rate limit and it is not recorded in the history.
 */

const MESSAGES = 5000;
// 64 two-character terms starting with the only letter of the texts: none is indexed (too
// short) and none matches, and each is looked for at every position of every message.
const TERMS = [...'bcdefghijklmnopqrstuvwxyz0123456789абвгдеёжзийклмнопрстуфхцчшщ'].slice(0, 64).map((c) => `a${c}`);
const SLOW_QUERY = TERMS.join(' OR ');

describe(`a search abandoned by its client (${testEngine})`, () => {
  let t: TestApp;
  let token: string;
  let port: number;
  let fullSearchMs: number;
  let admin: pg.Client | undefined;

  const searchesUsed = async () => {
    // Every poll in a second of its own: the account's per-second cap is not this test's subject.
    t.clock.advance(1000);
    return dailyOf(await usage(t, token, 'service_slug=messenger-search-create'), 'messenger-search-create').used;
  };
  const historyTotal = async () => {
    t.clock.advance(1000);
    const response = await t.request({ method: 'GET', url: '/service/messenger-search-history/', token });
    return (response.json() as ListBody<unknown>).total;
  };

  beforeAll(async () => {
    t = await createTestApp();
    await t.createUser({ org: 'Acme', email: 'alice@acme.test' });
    token = (await t.login('alice@acme.test')).access;
    const text = 'a'.repeat(1000);
    await loadCorpus(t, [
      channel(
        'slow',
        Array.from({ length: MESSAGES }, (_, i) => message(i + 1, `${text} ${i}`)),
      ),
    ]);
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    port = (t.app.server.address() as { port: number }).port;
    // How long the search takes when its client waits (it is then recorded and charged).
    const started = Date.now();
    const full = await t.request({ method: 'POST', url: SEARCH_PATH, token, body: { query: SLOW_QUERY } });
    fullSearchMs = Date.now() - started;
    expect(full.statusCode, full.body).toBe(200);
    expect(full.json()).toMatchObject({ total: 0 });
  }, scaled(60_000));
  afterAll(async () => {
    await admin?.end().catch(() => undefined);
    await t?.close();
  });

  it('stops the search, refunds it and leaves no history entry when the client disconnects mid-way', async () => {
    const usedBefore = await searchesUsed();
    const historyBefore = await historyTotal();

    const body = JSON.stringify({ query: SLOW_QUERY });
    const socket = connect({ host: '127.0.0.1', port });
    socket.on('error', () => undefined);
    socket.write(
      `POST ${SEARCH_PATH} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    // Admitted (charged for now) means its handler is running.
    await waitFor('the search to be admitted', async () => (await searchesUsed()) === usedBefore + 1);
    if (testEngine === 'postgres') {
      admin = new pg.Client({ connectionString: t.location.env.DRAGNET_DATABASE_URL });
      await admin.connect();
    }
    const running = async () => {
      const { rows } = await admin!.query(
        `select count(*)::int as n from pg_stat_activity where state = 'active' and pid <> pg_backend_pid() and query like '%strpos(m.text_folded%'`,
      );
      return (rows[0] as { n: number }).n;
    };
    if (admin) await waitFor('the search statement to run', async () => (await running()) > 0);

    const abandoned = Date.now();
    socket.destroy();

    // Refunded, and not recorded.
    await waitFor('the refund', async () => (await searchesUsed()) === usedBefore);
    expect(await historyTotal()).toBe(historyBefore);

    // Its statements stopped: on PostgreSQL no backend runs it any more, on SQLite the reader
    // threads it occupied answer another read long before the search would have ended.
    if (admin) {
      await waitFor('the statement to be cancelled', async () => (await running()) === 0);
    } else {
      t.clock.advance(1000);
      const channels = await t.request({ method: 'GET', url: '/service/messenger-channels/', token });
      expect(channels.statusCode).toBe(200);
    }
    expect(Date.now() - abandoned).toBeLessThan(fullSearchMs / 2);
    // Still not recorded once everything has settled.
    expect(await historyTotal()).toBe(historyBefore);
  });
});
