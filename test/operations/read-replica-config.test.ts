import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { formatLsn, isReplicaFailure, parseLsn, replicaLabel } from '../../src/db/read-replicas.ts';

/**
 * DRAGNET_DATABASE_READ_URLS (docs/operations.md "Read replicas") as configuration: the list is
 * read and checked, refused on the embedded store, and no message shows an entry (it may hold a
 * password). The replicas themselves are tested in test/scale-out/read-replicas.test.ts.
 */
const dataDir = mkdtempSync(path.join(tmpdir(), 'dragnet-read-urls-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
const base = {
  DRAGNET_DATA_DIR: dataDir,
  DRAGNET_SECRET_KEY: 'test-master-key-that-is-long-enough-0123456789',
  DRAGNET_CARD_HASH_KEY: 'test-card-hash-key-that-is-long-enough-012345',
};
const primary = 'postgres://dragnet:s3cret@db1:5432/dragnet';

describe('DRAGNET_DATABASE_READ_URLS', () => {
  it('reads a comma-separated list of postgres:// URLs, and none when unset or empty', () => {
    const urls = ' postgres://dragnet:s3cret@db2/dragnet ,postgresql://db3:6432/dragnet,';
    expect(
      loadConfig({ ...base, DRAGNET_DATABASE_URL: primary, DRAGNET_DATABASE_READ_URLS: urls }).databaseReadUrls,
    ).toEqual(['postgres://dragnet:s3cret@db2/dragnet', 'postgresql://db3:6432/dragnet']);
    expect(loadConfig({ ...base, DRAGNET_DATABASE_URL: primary }).databaseReadUrls).toEqual([]);
    expect(loadConfig({ ...base, DRAGNET_DATABASE_READ_URLS: ' , ' }).databaseReadUrls).toEqual([]);
  });

  it('refuses an entry that is not a postgres:// URL, naming its position but not its text', () => {
    const bad = 'mysql://dragnet:s3cret@db2/dragnet';
    const load = () =>
      loadConfig({ ...base, DRAGNET_DATABASE_URL: primary, DRAGNET_DATABASE_READ_URLS: `postgres://db2/d,${bad}` });
    expect(load).toThrow(
      'DRAGNET_DATABASE_READ_URLS must be comma-separated postgres:// URLs: entry 2 of 2 is not one',
    );
    expect(load).not.toThrow(/s3cret/);
  });

  it('is refused on the embedded store', () => {
    expect(() => loadConfig({ ...base, DRAGNET_DATABASE_READ_URLS: 'postgres://db2/dragnet' })).toThrow(
      /DRAGNET_DATABASE_READ_URLS needs DRAGNET_DATABASE_URL/,
    );
  });

  it('labels a replica by host, port and database, never its credentials', () => {
    expect(replicaLabel('postgres://dragnet:s3cret@db2/dragnet')).toBe('db2:5432/dragnet');
    expect(replicaLabel('postgres://db3:6432/search')).toBe('db3:6432/search');
  });
});

describe('replica positions and failures', () => {
  it('compares WAL positions as numbers', () => {
    expect(parseLsn('16/B374D848')).toBe((0x16n << 32n) + 0xb374d848n);
    expect(parseLsn('0/A') < parseLsn('0/10')).toBe(true);
    expect(formatLsn(parseLsn('16/B374D848'))).toBe('16/B374D848');
  });

  it('retries on the primary what the replica failed, not what the statement did', () => {
    for (const code of ['57P01', '57P02', '57P03', '08006', '40001', 'ECONNREFUSED', 'ECONNRESET'])
      expect(isReplicaFailure(Object.assign(new Error('x'), { code }))).toBe(true);
    expect(isReplicaFailure(new Error('Connection terminated unexpectedly'))).toBe(true);
    for (const code of ['57014', '42P01', '22001'])
      expect(isReplicaFailure(Object.assign(new Error('x'), { code }))).toBe(false);
    expect(isReplicaFailure(new Error('the statement was cancelled: its client went away'))).toBe(false);
  });
});
