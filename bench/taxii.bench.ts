/**
 * `npm run bench -- taxii [--hits n] [--limit n] [--accept-encoding value] [--store sqlite|postgres | --pg] [--admin-url url]`
 *
 * The TAXII 2.1 server's page walk (docs/taxii.md): a collection of 100,000 hits (by default)
 * of four sources (phishing, certificate, filtered leak, messenger), written straight into a
 * fresh store as rules, runs, incidents (matches) of 1,000 hits and their match_hits rows, then
 * walked through the "All incidents" collection over real HTTP (fetch, to the Dragnet API on
 * 127.0.0.1 in a child process, as `dragnet serve` builds it) with the default page size,
 * following `next` until `more` is false, asking for the encodings fetch asks for (gzip, deflate,
 * as Python's requests under taxii2-client and OpenCTI's connector do) unless told otherwise.
 * Prints objects/s, pages, p50/p95 per page, the server's and the client's CPU time and the load
 * average; checks every object came once. Target: at least 20,000 objects/s on SQLite (exit code
 * 1 when missed).
 */
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import type { Kysely } from 'kysely';
import { loadConfig } from '../src/config.ts';
import { createContainer } from '../src/container.ts';
import type { Database } from '../src/db/schema.ts';
import { ACCOUNT_SCOPE, serviceScope } from '../src/modules/usage/index.ts';
import { RAISED_LIMIT } from './support/bench-org.ts';
import { startChildServer } from './support/child-server.ts';
import { CleanupScope } from './support/cleanup.ts';
import { cpuSecondsOf } from './support/process-cpu.ts';
import { positive } from './support/options.ts';
import { createBenchStore, DEFAULT_POSTGRES_ADMIN_URL, type StoreKind } from './support/store.ts';

const TARGET_OBJECTS_PER_SECOND = 20_000;
const SERVERS_ENTRY = fileURLToPath(new URL('./support/servers.ts', import.meta.url));
const HITS_PER_INCIDENT = 1000;
const EMAIL = 'taxii-bench@bench.test';
const PASSWORD = 'taxii bench password 9d1c';
const TAXII_ACCEPT = 'application/taxii+json;version=2.1';

/** What fetch (undici) sends over http:// when the request names no Accept-Encoding. */
const FETCH_ACCEPT_ENCODING = 'gzip, deflate';

interface Options {
  hits: number;
  limit: number | undefined;
  acceptEncoding: string;
  store: StoreKind;
  adminUrl: string;
}

function parseOptions(args: string[]): Options {
  const program = new Command('npm run bench -- taxii')
    .description('a TAXII 2.1 page walk of a 100k-hit collection over HTTP')
    .option('--hits <n>', 'hits in the collection', positive('--hits', true, 10_000_000), 100_000)
    .option('--limit <n>', 'objects per page (default: the server default)', positive('--limit', true, 10_000))
    .option('--accept-encoding <value>', "the client's Accept-Encoding (identity: none)", FETCH_ACCEPT_ENCODING)
    .option('--store <kind>', 'sqlite or postgres', 'sqlite')
    .option('--pg', 'the same as --store postgres')
    .option(
      '--admin-url <url>',
      'PostgreSQL admin connection (a fresh database is created there and dropped)',
      process.env.DRAGNET_BENCH_DATABASE_URL || DEFAULT_POSTGRES_ADMIN_URL,
    )
    .exitOverride()
    .parse(args, { from: 'user' });
  const raw = program.opts<{
    hits: number;
    limit?: number;
    acceptEncoding: string;
    store: string;
    pg?: boolean;
    adminUrl: string;
  }>();
  const store = raw.pg ? 'postgres' : raw.store;
  if (store !== 'sqlite' && store !== 'postgres') throw new Error(`--store: unknown store "${store}"`);
  return { hits: raw.hits, limit: raw.limit, acceptEncoding: raw.acceptEncoding, store, adminUrl: raw.adminUrl };
}

/** Hit data shaped as each source's matcher stores it (the fields its STIX mapping reads). */
const SOURCES: { serviceId: number; name: string; hit: (i: number) => { key: string; data: object } }[] = [
  {
    serviceId: 8,
    name: 'phishing acme-bank.com',
    hit: (i) => ({
      key: `domain:acme-bank-login${i}.com`,
      data: {
        domain: `acme-bank-login${i}.com`,
        unicode: `acme-bank-login${i}.com`,
        registrable: `acme-bank-login${i}.com`,
        watched: 'acme-bank.com',
        fuzzer: 'addition',
        score: 0.82,
        distance: 6,
        brand_in_subdomain: false,
        registrar: 'NameCheap, Inc.',
        ip: `203.0.${(i >> 8) & 255}.${i & 255}`,
        ipv6: null,
        name_servers: ['dns1.registrar-servers.com', 'dns2.registrar-servers.com'],
        mx: ['mx.acme-bank-login.com'],
        has_mx: true,
        country: 'US',
        origin: 'zone',
        registered_at: '2026-03-01',
        first_seen: '2026-03-02',
        discovered_at: '2026-03-02',
      },
    }),
  },
  {
    serviceId: 9,
    name: 'certificates acme-bank.com',
    hit: (i) => ({
      key: `cert:${i.toString(16).padStart(64, '0')}`,
      data: {
        common_name: `login${i}.acme-bank.com.secure-id.net`,
        all_domains: [`login${i}.acme-bank.com.secure-id.net`, 'secure-id.net'],
        matched_names: [`login${i}.acme-bank.com.secure-id.net`],
        match_type: 'contains',
        issuer: "Let's Encrypt",
        issuer_cn: 'R3',
        subject_org: null,
        not_before: '2026-03-01T00:00:00.000Z',
        not_after: '2026-05-30T00:00:00.000Z',
        fingerprint: i.toString(16).padStart(64, '0'),
        sha1_fingerprint: i.toString(16).padStart(40, '0'),
        serial_number: i.toString(16),
        update_type: 'X509LogEntry',
        log_name: 'Google Argon 2026',
      },
    }),
  },
  {
    serviceId: 3,
    name: 'credentials acme-bank.com',
    hit: (i) => ({
      key: `cred:${i}`,
      data: {
        email: `user${i}@acme-bank.com`,
        username: null,
        has_password: true,
        url: 'https://login.acme-bank.com/signin',
        host: 'login.acme-bank.com',
        domain: 'acme-bank.com',
        login_domain: 'acme-bank.com',
        url_kind: 'login',
        software: 'RedLine',
        country: 'DE',
        os: 'Windows 10',
        leak_name: 'logs-2026-03',
        leak_type: 'stealer',
        machine: `DESKTOP-${i}`,
      },
    }),
  },
  {
    serviceId: 1,
    name: 'messenger "acme bank"',
    hit: (i) => ({
      key: `msg:${i}`,
      data: {
        message_id: i,
        channel_id: 12,
        channel_username: 'fresh_logs',
        user_id: 5000 + (i % 50),
        date: '2026-03-05T10:00:00.000Z',
        text_preview: `fresh logs acme-bank.com #${i}`,
        text: `fresh logs acme-bank.com #${i}: 1,200 accounts, DM for price`,
      },
    }),
  },
];

/** Rules, runs, incidents and hits, written straight into the store in chunks. */
async function writeCollection(db: Kysely<Database>, orgId: number, hits: number, start: number) {
  const ruleIds: number[] = [];
  for (const source of SOURCES) {
    const rule = await db
      .insertInto('alert_rules')
      .values({
        org_id: orgId,
        name: source.name,
        service_id: source.serviceId,
        args: '{}',
        frequency: 'daily',
        created_at: start,
        updated_at: start,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    ruleIds.push(Number(rule.id));
  }
  const incidents = Math.ceil(hits / HITS_PER_INCIDENT);
  for (let n = 0; n < incidents; n++) {
    const ruleIndex = n % SOURCES.length;
    const ruleId = ruleIds[ruleIndex]!;
    const at = start + n * 60_000;
    await db.transaction().execute(async (tx) => {
      const run = await tx
        .insertInto('rule_runs')
        .values({
          org_id: orgId,
          rule_id: ruleId,
          run_key: `bench:${n}`,
          window_end: at,
          status: 'complete',
          created_at: at,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      const count = Math.min(HITS_PER_INCIDENT, hits - n * HITS_PER_INCIDENT);
      const match = await tx
        .insertInto('matches')
        .values({
          org_id: orgId,
          rule_id: ruleId,
          run_id: Number(run.id),
          status: 'complete',
          total_hits: count,
          stored_hits: count,
          window_end: at,
          created_at: at,
          completed_at: at,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      for (let first = 0; first < count; first += 500) {
        const rows = [];
        for (let i = first; i < Math.min(count, first + 500); i++) {
          const { key, data } = SOURCES[ruleIndex]!.hit(n * HITS_PER_INCIDENT + i);
          rows.push({
            match_id: Number(match.id),
            rule_id: ruleId,
            hit_key: key,
            hit_date: at - i,
            data: JSON.stringify(data),
          });
        }
        await tx.insertInto('match_hits').values(rows).execute();
      }
    });
  }
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;

export async function run(args: string[]): Promise<void> {
  const options = parseOptions(args);
  const scope = new CleanupScope();
  try {
    const store = await createBenchStore(options.store, scope, options.adminUrl);
    const container = await createContainer(loadConfig({ ...store.env, DRAGNET_LOG_LEVEL: 'warn' }));
    try {
      const user = await container.users.create({ orgName: 'TAXII bench', email: EMAIL, password: PASSWORD });
      // The rate limiter stays on (every TAXII request passes it) with the organization's limits
      // raised, as `dragnet org set-limits` would: a walk of fast pages outruns 25 per second.
      await container.limits.setOverride(user.org_id, ACCOUNT_SCOPE, 'second', RAISED_LIMIT);
      await container.limits.setOverride(user.org_id, ACCOUNT_SCOPE, 'month', RAISED_LIMIT);
      await container.limits.setOverride(user.org_id, serviceScope('taxii'), 'day', RAISED_LIMIT);
      const built = Date.now();
      await writeCollection(container.store.db, user.org_id, options.hits, Date.parse('2026-03-01T00:00:00Z'));
      process.stdout.write(`store: ${options.store}; ${options.hits} hits written in ${Date.now() - built} ms\n`);
    } finally {
      await container.close();
    }

    // The server in a process of its own (as `dragnet serve` builds its API), the client here.
    const server = await startChildServer({
      entry: SERVERS_ENTRY,
      args: ['dragnet-peer'],
      env: { ...process.env, ...store.env, DRAGNET_LOG_LEVEL: 'warn' },
      scope,
      label: 'dragnet',
    });
    const base = server.url;
    const login = await fetch(`${base}/token/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: EMAIL, password: PASSWORD }),
    });
    const { access } = (await login.json()) as { access: string };
    const headers = { accept: TAXII_ACCEPT, authorization: `Bearer ${access}` };
    const collections = (await (await fetch(`${base}/taxii2/dragnet/collections/`, { headers })).json()) as {
      collections: { id: string; title: string }[];
    };
    const all = collections.collections.find((c) => c.title === 'All incidents')!;
    await walk({
      base,
      collection: all.id,
      headers: { ...headers, 'accept-encoding': options.acceptEncoding },
      limit: options.limit,
      store: options.store,
      serverPid: server.pid,
    });
  } finally {
    await scope.close();
  }
}

async function walk(input: {
  base: string;
  collection: string;
  headers: Record<string, string>;
  limit: number | undefined;
  store: StoreKind;
  serverPid: number;
}) {
  const url = `${input.base}/taxii2/dragnet/collections/${input.collection}/objects/`;
  const times: number[] = [];
  const seen = new Set<string>();
  let objects = 0;
  let bytes = 0;
  let wireBytes = 0;
  const encodings = new Set<string>();
  let next: string | undefined;
  const loadBefore = loadavg()[0]!;
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  const serverCpuBefore = cpuSecondsOf(input.serverPid);
  do {
    const query = new URLSearchParams({
      ...(input.limit ? { limit: String(input.limit) } : {}),
      ...(next ? { next } : {}),
    }).toString();
    const pageStarted = performance.now();
    const response = await fetch(query ? `${url}?${query}` : url, { headers: input.headers });
    const text = await response.text();
    if (response.status !== 200) throw new Error(`page ${times.length + 1}: ${response.status} ${text.slice(0, 300)}`);
    const page = JSON.parse(text) as { more: boolean; next?: string; objects: { id: string }[] };
    times.push(performance.now() - pageStarted);
    bytes += Buffer.byteLength(text);
    wireBytes += Number(response.headers.get('content-length') ?? 0);
    encodings.add(response.headers.get('content-encoding') ?? 'identity');
    objects += page.objects.length;
    for (const object of page.objects) seen.add(object.id);
    next = page.more ? page.next : undefined;
  } while (next);
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const clientCpu = (cpu.user + cpu.system) / 1e6;
  // On a loaded machine the server's CPU time says more than the clock.
  const serverCpu = cpuSecondsOf(input.serverPid) - serverCpuBefore;
  const sorted = [...times].sort((a, b) => a - b);
  const rate = objects / seconds;
  // One request at a time: on a quiet machine the clock is about the two processes' CPU summed.
  const quietRate = objects / (serverCpu + clientCpu);
  const met = rate >= TARGET_OBJECTS_PER_SECOND;
  const mb = (n: number) => (n / 1e6).toFixed(1);
  process.stdout.write(
    [
      `walk: ${objects} objects (${seen.size} distinct ids) in ${times.length} pages, ${seconds.toFixed(2)} s`,
      `bytes: ${mb(bytes)} MB of JSON, ${mb(wireBytes)} MB on the wire (Accept-Encoding: ${input.headers['accept-encoding']}; answered ${[...encodings].join(', ')})`,
      `objects/s: ${Math.round(rate)} on the clock`,
      `server CPU: ${serverCpu.toFixed(2)} s, ${Math.round(objects / serverCpu)} objects per CPU second`,
      `client CPU: ${clientCpu.toFixed(2)} s; server and client together ${Math.round(quietRate)} objects per CPU second (the clock's rate on a quiet machine, one request at a time)`,
      `load average: ${loadBefore.toFixed(2)} at the start, ${loadavg()[0]!.toFixed(2)} at the end, on ${cpus().length} cores`,
      `per page: p50 ${percentile(sorted, 0.5).toFixed(1)} ms, p95 ${percentile(sorted, 0.95).toFixed(1)} ms, max ${sorted[sorted.length - 1]!.toFixed(1)} ms`,
      `target ≥ ${TARGET_OBJECTS_PER_SECOND} objects/s on SQLite: ${input.store === 'sqlite' ? (met ? 'met' : 'MISSED') : `not applicable (store ${input.store})`}`,
      '',
    ].join('\n'),
  );
  if (input.store === 'sqlite' && !met) process.exitCode = 1;
}
