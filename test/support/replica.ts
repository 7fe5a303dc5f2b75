import { execFile } from 'node:child_process';
import { appendFileSync, chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);

/**
 * A PostgreSQL primary and a real streaming replica of it, for the read-replica tests and bench
 * (docs/architecture.md "When one PostgreSQL is not enough"), made with the machine's own
 * PostgreSQL binaries: `initdb` of a primary of their own on a free port, `pg_basebackup -R` of
 * it (a standby with primary_conninfo and a replication slot) started as a hot standby on
 * another, both in one temporary folder that `remove` deletes.
 *
 * Why a primary of their own rather than the server of DRAGNET_TEST_DATABASE_URL: a base backup
 * copies a whole cluster (every database of every suite sharing that server), a shared server's
 * WAL from other ingests can outrun the copy, and its pg_hba.conf need not allow replication;
 * none of that is this suite's to change. Each test store is then created on this primary, and
 * reaches the replica by streaming.
 */
export interface ReplicatedServer {
  /** The primary's admin URL (its `postgres` database): test stores are created there. */
  primaryUrl: string;
  replica: TestReplica;
  /** Stops both and deletes their folder. */
  remove(): Promise<void>;
}

export interface TestReplica {
  port: number;
  /** The replica's URL of a database of the primary: the same URL with the replica's port. */
  urlOf(primaryDatabaseUrl: string): string;
  /** Stops it at once (pg_ctl -m immediate: every backend goes, as in a crash). */
  kill(): Promise<void>;
  /** Starts it again after `kill`, and waits until it has caught up. */
  start(): Promise<void>;
  /** Waits until it has replayed everything the primary has written so far. */
  caughtUp(): Promise<void>;
  /** A query on the replica's `postgres` database. */
  query<R extends pg.QueryResultRow>(text: string): Promise<R[]>;
}

const isRoot = () => process.getuid?.() === 0;

/** PostgreSQL refuses to run as root: as root, its commands run as the postgres user. */
async function asServerUser(command: string, args: string[]) {
  const [file, argv] = isRoot() ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
  return run(file, argv, { timeout: 300_000 });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function queryOn<R extends pg.QueryResultRow>(url: string, text: string): Promise<R[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return (await client.query<R>(text)).rows;
  } finally {
    await client.end();
  }
}

/** The machine's PostgreSQL server binaries (Debian's layout, newest major first), or null. */
async function serverBinaries(): Promise<string | null> {
  const found: string[] = [];
  try {
    found.push((await run('pg_config', ['--bindir'])).stdout.trim());
  } catch {
    // pg_config is not installed: Debian's folders are looked at.
  }
  const root = '/usr/lib/postgresql';
  if (existsSync(root))
    found.push(
      ...readdirSync(root)
        .filter((major) => /^\d+$/.test(major))
        .sort((a, b) => Number(b) - Number(a))
        .map((major) => path.join(root, major, 'bin')),
    );
  return (
    found.find((bin) =>
      ['initdb', 'pg_ctl', 'pg_basebackup', 'postgres'].every((tool) => existsSync(path.join(bin, tool))),
    ) ?? null
  );
}

const urlOn = (port: number, database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`;

/** Starts a primary and a streaming replica of it, or answers why it cannot (the tests skip with it). */
export async function startReplicatedServer(): Promise<ReplicatedServer | { unavailable: string }> {
  const bin = await serverBinaries();
  if (!bin) return { unavailable: 'no PostgreSQL server binaries (initdb, pg_ctl, pg_basebackup) on this machine' };
  const dir = mkdtempSync(path.join(tmpdir(), 'dragnet-replica-'));
  chmodSync(dir, 0o700);
  if (isRoot()) await run('chown', ['postgres:postgres', dir]);
  const primaryData = path.join(dir, 'primary');
  const replicaData = path.join(dir, 'replica');
  const tool = (name: string) => path.join(bin, name);
  const pgCtl = (data: string, args: string[]) => asServerUser(tool('pg_ctl'), ['-D', data, ...args]);
  const stopAll = async () => {
    for (const data of [replicaData, primaryData])
      if (existsSync(path.join(data, 'postmaster.pid')))
        await pgCtl(data, ['-m', 'immediate', '-w', 'stop']).catch(() => undefined);
  };
  const logTail = (data: string) => {
    const file = `${data}.log`;
    return existsSync(file) ? readFileSync(file, 'utf8').slice(-2000) : '';
  };

  try {
    const primaryPort = await freePort();
    await asServerUser(tool('initdb'), [
      '-D',
      primaryData,
      '-U',
      'postgres',
      '--auth=trust',
      '-E',
      'UTF8',
      '--locale=C.UTF-8',
      '--no-sync',
    ]);
    // initdb's pg_hba.conf already trusts replication connections from 127.0.0.1.
    appendFileSync(
      path.join(primaryData, 'postgresql.conf'),
      [
        '',
        `port = ${primaryPort}`,
        `listen_addresses = '127.0.0.1'`,
        `unix_socket_directories = '${dir}'`,
        'wal_level = replica',
        'max_wal_senders = 5',
        'max_replication_slots = 5',
        'max_connections = 100',
        'shared_buffers = 128MB',
        // A test server: nothing survives a crash of the machine, so nothing is flushed for it.
        // (synchronous_commit stays on: WAL is sent to the replica once flushed, and without
        // it a commit waits for the WAL writer's next round, 200 ms, before the replica sees it.)
        'fsync = off',
        'full_page_writes = off',
        'hot_standby_feedback = on',
        '',
      ].join('\n'),
    );
    await pgCtl(primaryData, ['-l', `${primaryData}.log`, '-w', '-t', '120', 'start']);
    const primaryUrl = urlOn(primaryPort);

    const replicaPort = await freePort();
    // -C -S: a replication slot, so that the primary keeps the WAL the replica has not received
    // (a bench's ingest writes it faster than a restarted replica catches up).
    await asServerUser(tool('pg_basebackup'), [
      '-h',
      '127.0.0.1',
      '-p',
      String(primaryPort),
      '-U',
      'postgres',
      '-D',
      replicaData,
      '-X',
      'stream',
      '-c',
      'fast',
      '-C',
      '-S',
      'dragnet_test_replica',
      '-R',
    ]);
    // The copied configuration is the primary's: the last setting of a name wins.
    appendFileSync(path.join(replicaData, 'postgresql.conf'), `\nport = ${replicaPort}\nhot_standby = on\n`);
    const replicaUrl = urlOn(replicaPort);

    let running = false;
    const startReplica = async () => {
      await pgCtl(replicaData, ['-l', `${replicaData}.log`, '-w', '-t', '120', 'start']);
      running = true;
      const [row] = await queryOn<{ recovery: boolean }>(replicaUrl, 'select pg_is_in_recovery() as recovery');
      if (!row?.recovery) throw new Error('the replica is not in recovery');
      await caughtUp();
    };
    const caughtUp = async () => {
      const target = (await queryOn<{ lsn: string }>(primaryUrl, 'select pg_current_wal_flush_lsn()::text as lsn'))[0]!
        .lsn;
      const deadline = Date.now() + 120_000;
      for (;;) {
        const [replayed] = await queryOn<{ done: boolean }>(
          replicaUrl,
          `select coalesce(pg_last_wal_replay_lsn() >= '${target}'::pg_lsn, false) as done`,
        );
        if (replayed?.done) return;
        if (Date.now() > deadline) throw new Error(`the replica did not replay up to ${target} within 120 s`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    try {
      await startReplica();
    } catch (error) {
      throw new Error(`${(error as Error).message}\n${logTail(replicaData)}`);
    }
    const replica: TestReplica = {
      port: replicaPort,
      urlOf(primaryDatabaseUrl) {
        const url = new URL(primaryDatabaseUrl);
        url.port = String(replicaPort);
        return url.toString();
      },
      async kill() {
        if (!running) return;
        running = false;
        await pgCtl(replicaData, ['-m', 'immediate', '-w', 'stop']);
      },
      start: startReplica,
      caughtUp,
      query: (text) => queryOn(replicaUrl, text),
    };
    return {
      primaryUrl,
      replica,
      async remove() {
        await stopAll();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    const detail = (error as { stderr?: string }).stderr ?? '';
    await stopAll();
    const logs = `${logTail(primaryData)}${logTail(replicaData)}`;
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`the replicated test server did not start: ${(error as Error).message}\n${detail}\n${logs}`);
  }
}
