import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.ts';
import { expectError } from '../support/http.ts';
import { search } from '../support/messenger-search.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';
import { testEngine } from '../support/test-store.ts';

/**
 * Text from files is safe for both stores (U+0000, which PostgreSQL refuses, is removed), and
 * what an ingest reports names the user's own file, never where the server keeps it.
 */

const line = (id: number, text: string) =>
  JSON.stringify({
    channel: { title: 'Nul Feed', username: 'nulfeed' },
    message_id: id,
    date: '2026-03-10T08:00:00Z',
    text,
  });

// A JSON escape of U+0000 and a raw NUL byte (invalid JSON as it stands) between plain lines.
const withNuls = (first: number, word: string) =>
  [
    line(first, `plain ${word}`),
    line(first + 1, `escaped\u0000 ${word}`),
    line(first + 2, `raw NUL ${word}`).replace('raw NUL', 'raw\0NUL'),
  ].join('\n') + '\n';

describe(`ingested text with NUL characters, ingest errors without server paths (${testEngine})`, () => {
  let t: TestApp;
  let system: string;
  let member: string;

  beforeAll(async () => {
    t = await createTestApp();
    await t.createUser({ org: 'Operators', email: 'ops@nul.test', role: 'system' });
    await t.createUser({ org: 'Customer', email: 'member@nul.test' });
    system = (await t.login('ops@nul.test')).access;
    member = (await t.login('member@nul.test')).access;
  });
  afterAll(async () => t?.close());

  const push = (url: string, body: string, contentType: string) =>
    t.app.inject({
      method: 'POST',
      url,
      payload: body,
      headers: { authorization: `Bearer ${system}`, 'content-type': contentType },
    });

  const expectStoredWithoutNul = async (word: string) => {
    const found = await search(t, member, { query: word });
    expect(found.total).toBe(3);
    expect(JSON.stringify(found.results)).not.toContain('\\u0000');
    expect(JSON.stringify(found.results)).toContain('rawNUL');
  };

  it('dragnet ingest stores every line of a file with NUL characters, without them', async () => {
    const file = path.join(t.location.dataDir, 'nul.jsonl');
    writeFileSync(file, withNuls(1, 'clinulword'));
    const result = await runCli(['--json', 'ingest', 'messenger', file], { env: t.location.env });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ failed: 0, messages_added: 3, rejected: 0 });
    await expectStoredWithoutNul('clinulword');
  });

  it('POST /ingest/ stores them too, for the messenger and for a line-based source', async () => {
    const messages = await push('/ingest/messenger/?format=jsonl', withNuls(11, 'apinulword'), 'application/x-ndjson');
    expect(messages.statusCode, messages.body).toBe(200);
    expect(messages.json()).toMatchObject({ accepted: 3, rejected: 0 });
    await expectStoredWithoutNul('apinulword');

    const combos = await push(
      '/ingest/filtered_leak/?format=combolist&name=combo.txt',
      'alice@nul-corp.test:pass\0word\nbob@nul-corp.test:hunter2\n',
      'text/plain',
    );
    expect(combos.statusCode, combos.body).toBe(200);
    expect(combos.json()).toMatchObject({ accepted: 2, rejected: 0 });
  });

  it("an ingest error names the client's file name, not the server's data folder", async () => {
    const broken = await push(
      '/ingest/messenger/?format=telegram&name=dump.json',
      '{"name": "cut off',
      'application/json',
    );
    const body = expectError(broken, 400, 'validation_failed');
    expect(body.message).toMatch(
      /^the body is not messenger input in format telegram: dump\.json: line 1, column \d+: malformed JSON$/,
    );
    expect(broken.body).not.toContain(t.location.dataDir);
    expect(broken.body).not.toContain('ingest-');

    const rejected = await push(
      '/ingest/messenger/?format=jsonl&name=feed.jsonl',
      `${line(40, 'kept')}\n{"text": 1}\n`,
      'application/x-ndjson',
    );
    expect(rejected.statusCode, rejected.body).toBe(200);
    expect(rejected.json()).toMatchObject({ accepted: 1, rejected: 1, errors: [{ location: 'line 2' }] });
    expect(rejected.body).not.toContain(t.location.dataDir);
  });
});
