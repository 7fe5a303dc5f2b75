import type { Expression, Selectable, SqlBool } from 'kysely';
import type { BatchRule, Hit, MatchResult, MatchWindow, SourceContext } from '../kit/source.ts';
import { unicodeOf } from '../common/domains/domain-name.ts';
import { createLookalikeIndex, measureLookalike, type Lookalike, type LookalikeIndex } from './lookalike-index.ts';
import { phishingDb, type ObservedDomainTable } from '../common/domains/observed-domains.ts';
import { isoDateOrNull as isoOf } from '../../../lib/iso-date.ts';

type ObservedRow = Selectable<ObservedDomainTable>;

// Observed domains read per query: the scan holds one page, never the window.
const SCAN_PAGE = 5000;

const listOf = (json: string | null): string[] => (json === null ? [] : (JSON.parse(json) as string[]));

/** A stored domain as a hit of one watched domain. */
function lookalikeHit(index: LookalikeIndex, lookalike: Lookalike, row: ObservedRow): Hit {
  const mx = listOf(row.mx);
  const { distance, score } = measureLookalike(index, lookalike, {
    domain: row.domain,
    registrable: row.registrable,
    hasMx: mx.length > 0,
  });
  return {
    key: `domain:${row.domain}`,
    date: Number(row.discovered_at),
    data: {
      domain: row.domain,
      unicode: unicodeOf(row.domain),
      registrable: row.registrable,
      watched: index.watched(lookalike.watched).name.domain,
      fuzzer: lookalike.fuzzer,
      score,
      distance,
      brand_in_subdomain: lookalike.brandInSubdomain,
      registrar: row.registrar,
      ip: row.ip,
      ipv6: row.ipv6,
      name_servers: listOf(row.name_servers),
      mx,
      has_mx: mx.length > 0,
      country: row.country,
      origin: row.origin,
      registered_at: isoOf(row.registered_at),
      first_seen: isoOf(row.first_seen),
      discovered_at: isoOf(row.discovered_at),
    },
  };
}

/** What the scan reads of each observed domain: enough to match it and to page on. */
interface ScannedRow {
  id: number;
  domain: string;
  registrable: string;
  discovered_at: number;
}

/**
 * Pages through the domains observed in (since, until], newest first, and hands each page to
 * `visit`. Keyset pages on (discovered_at, id): memory holds one page whatever the window, and
 * a page holds only the columns matching reads.
 */
async function scanObserved(
  context: SourceContext,
  window: MatchWindow,
  visit: (rows: ScannedRow[]) => Promise<void>,
): Promise<void> {
  const db = phishingDb(context);
  let after: { at: number; id: number } | null = null;
  for (;;) {
    const cursor: { at: number; id: number } | null = after;
    const rows: ScannedRow[] = await db
      .selectFrom('observed_domains')
      .select(['id', 'domain', 'registrable', 'discovered_at'])
      .where((eb) => {
        // After the first page the cursor is the upper bound (it is within the window): given
        // `discovered_at <= until` as well, SQLite seeks on that and walks every row already read.
        const conditions: Expression<SqlBool>[] = [
          cursor === null
            ? eb('discovered_at', '<=', window.until)
            : eb(eb.refTuple('discovered_at', 'id'), '<', eb.tuple(cursor.at, cursor.id)),
        ];
        if (window.since !== null) conditions.push(eb('discovered_at', '>', window.since));
        return eb.and(conditions);
      })
      .orderBy('discovered_at', 'desc')
      .orderBy('id', 'desc')
      .limit(SCAN_PAGE)
      .execute();
    await visit(rows);
    if (rows.length < SCAN_PAGE) return;
    const last = rows[rows.length - 1]!;
    after = { at: Number(last.discovered_at), id: Number(last.id) };
  }
}

// Rows fetched by id per query (a bound variable each).
const FETCH_CHUNK = 500;

async function fullRows(context: SourceContext, ids: number[]): Promise<Map<number, ObservedRow>> {
  const rows = new Map<number, ObservedRow>();
  for (let i = 0; i < ids.length; i += FETCH_CHUNK) {
    const chunk = await phishingDb(context)
      .selectFrom('observed_domains')
      .selectAll()
      .where('id', 'in', ids.slice(i, i + FETCH_CHUNK))
      .execute();
    for (const row of chunk) rows.set(Number(row.id), row);
  }
  return rows;
}

interface PendingRule {
  ruleId: number;
  since: number | null;
  hits: Hit[];
  /** Hits kept so far, including those whose rows the current page still has to read. */
  kept: number;
  total: number;
}

/**
 * The hits of several watched domains from one scan of the observed domains: the lookalike
 * index holds every rule's permutations, so each observed domain is looked up once, not once
 * per rule. `match` is the same with one rule; the tick's matchMany passes all due rules.
 */
async function matchLookalikes(
  context: SourceContext,
  rules: { ruleId: number; domain: string; since: number | null }[],
  until: number,
  limit: number,
): Promise<Map<number, MatchResult>> {
  const results = new Map<number, MatchResult>();
  if (rules.length === 0) return results;
  const index = createLookalikeIndex(rules.map((rule) => rule.domain));
  const pending: PendingRule[] = rules.map((rule) => ({
    ruleId: rule.ruleId,
    since: rule.since,
    hits: [],
    kept: 0,
    total: 0,
  }));
  const since = pending.reduce<number | null>(
    (earliest, rule) => (earliest === null || rule.since === null ? null : Math.min(earliest, rule.since)),
    pending[0]!.since,
  );
  await scanObserved(context, { since, until }, async (page) => {
    const wanted: { rule: PendingRule; lookalike: Lookalike; id: number }[] = [];
    for (const row of page) {
      const discoveredAt = Number(row.discovered_at);
      for (const lookalike of index.lookalikesOf(row)) {
        const rule = pending[lookalike.watched]!;
        // spec 3.3.3: only domains newer than this rule's last run.
        if (rule.since !== null && discoveredAt <= rule.since) continue;
        rule.total++;
        // Rows arrive newest first: the first `limit` are the ones kept.
        if (rule.kept < limit) {
          rule.kept++;
          wanted.push({ rule, lookalike, id: Number(row.id) });
        }
      }
    }
    if (wanted.length === 0) return;
    const rows = await fullRows(context, [...new Set(wanted.map((hit) => hit.id))]);
    for (const { rule, lookalike, id } of wanted) rule.hits.push(lookalikeHit(index, lookalike, rows.get(id)!));
  });
  for (const rule of pending) results.set(rule.ruleId, { hits: rule.hits, total: rule.total });
  return results;
}

export async function matchPhishing(
  context: SourceContext,
  domain: string,
  window: MatchWindow,
  limit: number,
): Promise<MatchResult> {
  const results = await matchLookalikes(context, [{ ruleId: 0, domain, since: window.since }], window.until, limit);
  return results.get(0)!;
}

/** The rules' args are their watched domains, as prepare checked them. */
export function matchPhishingMany(
  context: SourceContext,
  rules: BatchRule<string>[],
  until: number,
  limit: number,
): Promise<Map<number, MatchResult>> {
  return matchLookalikes(
    context,
    rules.map((rule) => ({ ruleId: rule.ruleId, domain: rule.args, since: rule.since })),
    until,
    limit,
  );
}
