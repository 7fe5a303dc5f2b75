import type { Clock } from '../../lib/clock.ts';
import { AppError, validationError, type FieldError } from '../../lib/errors.ts';
import { findSource } from '../sources/index.ts';
import type { MatchService } from './match.service.ts';
import { HIT_KEY_FIELD, isExcluded, MAX_STORED_HITS, type RuleRunner } from './rule-runner.ts';
import type { RuleRepository, RuleRow } from './rule.repository.ts';
import { isoDateOrNull as iso } from '../../lib/iso-date.ts';
import type { RuleContext, RuleService } from './rule.service.ts';

/** The longest past window a preview reads: a month of data is what an analyst tunes a rule on. */
export const MAX_PREVIEW_DAYS = 31;
/** The hits a preview pages through: a match keeps as many (MAX_STORED_HITS). */
const MAX_PREVIEW_HITS = MAX_STORED_HITS;
const DAY_MS = 24 * 3_600_000;

export interface PreviewRequest {
  rule_id?: number;
  service?: number;
  args?: unknown;
  from: string;
  to: string;
  page: number;
  page_size: number;
}

/** Whether the tick passes the rule over. */
const pauseView = (row: Pick<RuleRow, 'id' | 'is_paused' | 'paused_at' | 'paused_by'>) => ({
  rule_id: Number(row.id),
  is_paused: Number(row.is_paused) === 1,
  paused_at: iso(row.paused_at),
  paused_by: row.paused_by === null ? null : Number(row.paused_by),
});

/** The window of a preview, each broken rule naming its field. */
function previewWindow(request: PreviewRequest, now: number): { since: number; until: number } {
  const fields: FieldError[] = [];
  const since = Date.parse(request.from);
  const until = Date.parse(request.to);
  if (Number.isNaN(since)) fields.push({ field: 'from', message: 'must be an ISO 8601 date-time' });
  if (Number.isNaN(until)) fields.push({ field: 'to', message: 'must be an ISO 8601 date-time' });
  if (!fields.length) {
    if (until <= since) fields.push({ field: 'to', message: 'must be after from' });
    else if (until - since > MAX_PREVIEW_DAYS * DAY_MS)
      fields.push({ field: 'to', message: `the window is at most ${MAX_PREVIEW_DAYS} days from from` });
    if (until > now) fields.push({ field: 'to', message: 'must not be in the future' });
  }
  if (fields.length)
    throw new AppError('validation_failed', fields.map((f) => `${f.field}: ${f.message}`).join('; '), { fields });
  return { since, until };
}

/**
 * Steering a rule beyond its body (docs/api.md "Pause, run now, preview"): pause and resume
 * (rule.service.ts keeps the flag), run it now through the scheduler's own run, and preview
 * what its matcher finds over a past window without storing or sending anything.
 */
export function createRuleSteering(deps: {
  rules: RuleService;
  ruleRepository: RuleRepository;
  runner: RuleRunner;
  matches: MatchService;
  clock: Clock;
}) {
  const { rules, ruleRepository, runner, matches, clock } = deps;

  /** The source, args and exclusions a preview runs with: a stored rule's, or a body's like create's. */
  async function previewTarget(orgId: number, request: PreviewRequest) {
    if ((request.rule_id === undefined) === (request.service === undefined))
      throw validationError('rule_id', 'give either rule_id or service (with args)');
    if (request.rule_id !== undefined) {
      if (request.args !== undefined)
        throw validationError('args', "a stored rule's preview uses its own args; omit it");
      const rule = await rules.load(orgId, request.rule_id);
      return {
        source: findSource(Number(rule.service_id))!,
        args: JSON.parse(rule.args) as Record<string, unknown>,
        exclusions: await ruleRepository.exclusions(Number(rule.id)),
      };
    }
    const { source, args } = await rules.validSource(orgId, { service: request.service!, args: request.args });
    return { source, args, exclusions: [] };
  }

  /**
   * The match a run recorded; an async source's run recorded a pending one that its job fills,
   * which the runner does not hand back: it is the rule's newest, ending where the run did.
   */
  async function matchOfRun(orgId: number, ruleId: number, outcome: { matchId: number | null; windowEnd: number }) {
    if (outcome.matchId !== null) return { match: await matches.getMatch(orgId, outcome.matchId) };
    const [newest] = (await matches.listMatches(orgId, ruleId, { page: 1, page_size: 1 })).results;
    return { match: newest && Date.parse(newest.window_end) === outcome.windowEnd ? newest : null };
  }

  return {
    pauseState: async (orgId: number, id: number) => pauseView(await rules.load(orgId, id)),

    /** The organization's paused active rules (bounded by its rule limit). */
    pausedRules: async (orgId: number) => (await ruleRepository.paused(orgId)).map(pauseView),

    /** Pauses or resumes; `changed` is false when the rule already was so. */
    async setPaused(context: RuleContext, ruleId: number, paused: boolean) {
      const { rule, changed } = await rules.setPaused(context, ruleId, paused);
      return { rule, changed, state: pauseView(rule) };
    },

    /**
     * The hits the matcher finds in (from, to], newest first, as a match's hits look (without
     * the stored row's id); a page of at most the first 10,000 (page × page_size), `count` all.
     */
    async preview(orgId: number, request: PreviewRequest) {
      const window = previewWindow(request, clock.now().getTime());
      // The matcher reads page × page_size hits to hand back the last page_size of them.
      if (request.page * request.page_size > MAX_PREVIEW_HITS)
        throw validationError('page', `pages reach the first ${MAX_PREVIEW_HITS.toLocaleString('en')} hits`);
      const { source, args, exclusions } = await previewTarget(orgId, request);
      const result = await runner.preview(source, args, window, request.page * request.page_size);
      const present = (data: Record<string, unknown>) => source.presentHit?.(data) ?? data;
      const offset = (request.page - 1) * request.page_size;
      return {
        count: Math.max(result.total, result.hits.length),
        page: request.page,
        page_size: request.page_size,
        from: new Date(window.since).toISOString(),
        to: new Date(window.until).toISOString(),
        results: result.hits.slice(offset, offset + request.page_size).map((hit) => ({
          is_excluded: isExcluded(hit, exclusions),
          ...present(hit.data),
          [HIT_KEY_FIELD]: hit.key,
        })),
      };
    },

    /** Runs the rule over (last_run, now] as a scheduled run would; a paused rule too (a person asked). */
    async runNow(context: RuleContext, ruleId: number) {
      const rule = await rules.load(context.orgId, ruleId);
      if (Number(rule.is_deleted) === 1)
        throw new AppError('conflict', 'a deleted rule does not run; restore it first');
      const outcome = await runner.runOnDemand(rule);
      return {
        ...(await matchOfRun(context.orgId, ruleId, outcome)),
        rule_id: ruleId,
        ran: outcome.ran,
        window_start: rule.last_run === null ? null : new Date(Number(rule.last_run)).toISOString(),
        window_end: new Date(outcome.windowEnd).toISOString(),
      };
    },
  };
}

export type RuleSteering = ReturnType<typeof createRuleSteering>;
