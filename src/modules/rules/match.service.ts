import { freshReads, type ReadRouter } from '../../db/read-replicas.ts';
import { conflict, notFound, validationError } from '../../lib/errors.ts';
import { linkedPage, pageWindow, type PageRequest } from '../../lib/pagination.ts';
import { findSource, type ContextWindow, type SourceContext } from '../sources/index.ts';
import { HIT_KEY_FIELD, isExcluded } from './rule-runner.ts';
import type { RuleRepository } from './rule.repository.ts';
import type { RunRepository } from './run.repository.ts';
import { isoDateOrNull as iso } from '../../lib/iso-date.ts';

export interface HitQuery extends PageRequest {
  /** `field:value` pairs over the source's filterable fields (all must hold). */
  filter?: string[];
  /** A sortable field, `-` in front for descending; default newest first. */
  sort?: string;
  include_excluded: boolean;
}

interface MatchServiceDeps {
  context: SourceContext;
  rules: RuleRepository;
  runs: RunRepository;
}

async function ruleOf(rules: RuleRepository, orgId: number, ruleId: number) {
  const rule = await rules.findOwned(orgId, ruleId);
  if (!rule) throw notFound('monitoring rule');
  return { rule, source: findSource(Number(rule.service_id))! };
}

export const matchView = (row: {
  id: number;
  rule_id: number;
  status: string;
  total_hits: number;
  stored_hits: number;
  excluded_hits: number;
  window_start: number | null;
  window_end: number;
  created_at: number;
  completed_at: number | null;
  progress: string | null;
}) => ({
  id: Number(row.id),
  rule_id: Number(row.rule_id),
  status: row.status,
  total_hits: Number(row.total_hits),
  stored_hits: Number(row.stored_hits),
  excluded_hits: Number(row.excluded_hits),
  new_hits: Number(row.stored_hits) - Number(row.excluded_hits),
  window_start: iso(row.window_start),
  window_end: iso(row.window_end)!,
  created_at: iso(row.created_at)!,
  completed_at: iso(row.completed_at),
  // Only an async source's match has progress; a sync match's view stays as it was.
  ...(row.progress === null
    ? {}
    : { progress: JSON.parse(row.progress) as { done: number; total: number; unit: string } }),
});

function matchQueries({ context, rules, runs }: MatchServiceDeps) {
  async function getMatch(orgId: number, matchId: number) {
    const match = await runs.findMatch(orgId, matchId);
    if (!match) throw notFound('match');
    return match;
  }

  return {
    getMatch: async (orgId: number, matchId: number) => matchView(await getMatch(orgId, matchId)),

    /**
     * The secret fields of one hit in clear (a leaked password), with the rule they were found
     * by, for the caller to record in the audit log. A hit without secrets is a 404 as well.
     */
    async revealHit(orgId: number, hitId: number) {
      const hit = await runs.findHit(orgId, hitId);
      if (!hit) throw notFound('hit');
      const { rule, source } = await ruleOf(rules, orgId, Number(hit.rule_id));
      const fields = source.revealHit?.(JSON.parse(hit.data) as Record<string, unknown>, context);
      if (!fields) throw notFound('hit with a secret to reveal');
      return { rule, hit: { id: Number(hit.id), match_id: Number(hit.match_id), fields } };
    },

    /** The posts around a hit in its channel or thread, for sources whose hits are posts. */
    async hitContext(orgId: number, hitId: number, around: ContextWindow) {
      const hit = await runs.findHit(orgId, hitId);
      if (!hit) throw notFound('hit');
      const { source } = await ruleOf(rules, orgId, Number(hit.rule_id));
      const found = await source.hitContext?.(
        context,
        { key: hit.hit_key, data: JSON.parse(hit.data) as Record<string, unknown> },
        around,
      );
      if (!found) throw notFound('conversation of this hit');
      return { hit_id: Number(hit.id), ...found };
    },

    async listMatches(orgId: number, ruleId: number, page: PageRequest) {
      await ruleOf(rules, orgId, ruleId);
      const { total, rows } = await runs.listMatchesPage(orgId, ruleId, pageWindow(page));
      return linkedPage(`/service/alert_system_match_get_match_list/${ruleId}/`, page, total, rows.map(matchView));
    },

    /**
     * A match's hits, filtered and sorted by the source's declared fields. Hits per match are
     * bounded (10,000), so this works on the decoded rows rather than per-engine JSON SQL.
     */
    async listHits(orgId: number, matchId: number, query: HitQuery) {
      const match = await getMatch(orgId, matchId);
      const { source } = await ruleOf(rules, orgId, Number(match.rule_id));
      const filters = (query.filter ?? []).map((raw) => {
        const at = raw.indexOf(':');
        const field = at === -1 ? raw : raw.slice(0, at);
        if (at === -1 || !source.filterableFields.includes(field)) {
          throw validationError('filter', `use field:value with one of ${source.filterableFields.join(', ')}`);
        }
        return { field, value: raw.slice(at + 1).toLowerCase() };
      });
      const descending = query.sort?.startsWith('-') ?? true;
      const sortField = query.sort?.replace(/^-/, '') ?? 'date';
      if (query.sort && !source.sortableFields.includes(sortField)) {
        throw validationError('sort', `must be one of ${source.sortableFields.join(', ')} (prefix - for descending)`);
      }
      const present = (data: Record<string, unknown>) => source.presentHit?.(data) ?? data;
      const rows = await runs.hitsOfMatch(match.id);
      const hits = rows
        .map((row) => ({
          id: Number(row.id),
          key: row.hit_key,
          is_excluded: Number(row.is_excluded) === 1,
          date: Number(row.hit_date),
          data: present(JSON.parse(row.data) as Record<string, unknown>),
        }))
        .filter((hit) => query.include_excluded || !hit.is_excluded)
        .filter((hit) => filters.every((f) => String(hit.data[f.field] ?? '').toLowerCase() === f.value));
      const key = (hit: (typeof hits)[number]) => (sortField === 'date' ? hit.date : hit.data[sortField]);
      hits.sort((a, b) => {
        const left = key(a);
        const right = key(b);
        const order =
          typeof left === 'number' && typeof right === 'number'
            ? left - right
            : String(left ?? '').localeCompare(String(right ?? ''));
        return (descending ? -order : order) || a.id - b.id;
      });
      const { offset, limit } = pageWindow(query);
      const results = hits
        .slice(offset, offset + limit)
        .map((hit) => ({ id: hit.id, is_excluded: hit.is_excluded, ...hit.data, [HIT_KEY_FIELD]: hit.key }));
      return linkedPage(`/service/alert_system_match_get_match_hits/${matchId}/`, query, hits.length, results, {
        filter: query.filter,
        sort: query.sort,
        include_excluded: query.include_excluded,
      });
    },
  };
}

function exclusionCommands({ context, rules, runs }: MatchServiceDeps) {
  async function applyExclusions(ruleId: number) {
    await runs.transaction(async (tx) => {
      const exclusions = await rules.exclusions(ruleId, tx);
      const hits = await runs.hitsOfRule(ruleId, tx);
      const changes = { exclude: [] as number[], include: [] as number[] };
      for (const hit of hits) {
        const excluded = isExcluded(
          { key: hit.hit_key, date: Number(hit.hit_date), data: JSON.parse(hit.data) as Record<string, unknown> },
          exclusions,
        );
        if (excluded !== (Number(hit.is_excluded) === 1))
          (excluded ? changes.exclude : changes.include).push(Number(hit.id));
      }
      await runs.setExcluded(changes.exclude, true, tx);
      await runs.setExcluded(changes.include, false, tx);
      await runs.recount(ruleId, tx);
    });
  }

  return {
    async createExclusion(orgId: number, ruleId: number, input: { field: string; value: string }) {
      // Under the rule's lock: a delete at the same moment either snapshots this exclusion or
      // comes first and makes this a 409, never leaves it on the deleted rule.
      const row = await rules.transaction(async (tx) => {
        const rule = await rules.lock(orgId, ruleId, tx);
        if (Number(rule.is_deleted) === 1) throw conflict('a deleted rule has no exclusions; restore it first');
        const source = findSource(Number(rule.service_id))!;
        if (input.field !== HIT_KEY_FIELD && !source.excludableFields.includes(input.field)) {
          throw validationError('field', `must be ${HIT_KEY_FIELD} or one of ${source.excludableFields.join(', ')}`);
        }
        return rules.addExclusion({ orgId, ruleId, ...input, now: context.clock.now().getTime() }, tx);
      });
      if (!row) throw conflict('this exclusion already exists');
      await applyExclusions(ruleId);
      return {
        id: Number(row.id),
        rule_id: ruleId,
        field: row.field,
        value: row.value,
        created_at: iso(row.created_at)!,
      };
    },

    async listExclusions(orgId: number, ruleId: number) {
      await ruleOf(rules, orgId, ruleId);
      const rows = await rules.exclusions(ruleId);
      return rows.map((row) => ({
        id: Number(row.id),
        rule_id: ruleId,
        field: row.field,
        value: row.value,
        created_at: iso(row.created_at)!,
      }));
    },

    async deleteExclusion(orgId: number, exclusionId: number) {
      const row = await rules.findExclusion(orgId, exclusionId);
      if (!row) throw notFound('exclusion');
      // Under the rule's lock, as a create: a delete of the rule snapshots the exclusions before or after this.
      await rules.transaction(async (tx) => {
        await rules.lock(orgId, Number(row.rule_id), tx);
        await rules.deleteExclusion(exclusionId, tx);
      });
      await applyExclusions(Number(row.rule_id));
    },
  };
}

/** Matches of a rule, their hits, and exclusions (docs/api.md "Matches and exclusions"). */
/**
 * `replicas`: with read replicas, the match reads (matches, hits) run on repositories over
 * Store.reader inside `reads.fresh` (src/db/read-replicas.ts); the exclusions stay on the primary.
 */
export function createMatchService(
  deps: MatchServiceDeps & { replicas?: { reads: ReadRouter; rules: RuleRepository; runs: RunRepository } },
) {
  const { replicas } = deps;
  const queries = replicas?.reads.enabled
    ? freshReads(replicas.reads, matchQueries({ ...deps, rules: replicas.rules, runs: replicas.runs }))
    : matchQueries(deps);
  return { ...queries, ...exclusionCommands(deps) };
}

export type MatchService = ReturnType<typeof createMatchService>;
