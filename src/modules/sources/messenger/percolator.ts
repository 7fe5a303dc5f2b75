import { sql } from 'kysely';
import { foldText, matchesFolded, type QueryNode } from '../common/query/query-language.ts';
import type { MatchResult, SourceContext } from '../kit/source.ts';
import { AhoCorasick } from './aho-corasick.ts';
import {
  collapseIdenticalTexts,
  MESSAGE_COLUMNS,
  messageHit,
  type MessageRow,
  type MessengerQuery,
} from './message-hits.ts';

/**
 * Percolation: instead of one search per rule, the new messages are scanned once and each is
 * tested only against the rules that could match it. Every rule is reduced to its "anchors",
 * a set of terms at least one of which any matching message must contain; one Aho–Corasick
 * automaton over all anchors finds the candidate rules of a message, and the full Boolean
 * query confirms them. Rules without anchors (a query that only excludes) are tested on every
 * message.
 */
export function anchorsOf(node: QueryNode): string[] | null {
  switch (node.type) {
    case 'term':
      return [foldText(node.value)];
    case 'not':
      return null;
    case 'or': {
      const sets = node.children.map(anchorsOf);
      return sets.some((s) => s === null) ? null : [...new Set(sets.flat() as string[])];
    }
    case 'and': {
      // Any child's anchors are necessary; the most selective are the fewest, longest terms.
      const sets = node.children.map(anchorsOf).filter((s): s is string[] => s !== null);
      if (sets.length === 0) return null;
      const score = (set: string[]) => Math.min(...set.map((t) => t.length)) - set.length / 100;
      return sets.reduce((best, set) => (score(set) > score(best) ? set : best));
    }
  }
}

interface PercolatorRule {
  ruleId: number;
  args: MessengerQuery;
  since: number;
}

interface CompiledRule extends PercolatorRule {
  channels: Set<number> | null;
}

const SCAN_PAGE = 5000;

export function createPercolator(rules: PercolatorRule[]) {
  const compiled: CompiledRule[] = rules.map((rule) => ({
    ...rule,
    channels: rule.args.channelIds && new Set(rule.args.channelIds),
  }));

  const patterns: string[] = [];
  const patternIndex = new Map<string, number>();
  const rulesByPattern: number[][] = [];
  const unanchored: number[] = [];
  compiled.forEach((rule, index) => {
    const anchors = anchorsOf(rule.args.tree);
    if (anchors === null) return unanchored.push(index);
    for (const anchor of anchors) {
      let id = patternIndex.get(anchor);
      if (id === undefined) {
        id = patterns.push(anchor) - 1;
        patternIndex.set(anchor, id);
        rulesByPattern.push([]);
      }
      rulesByPattern[id]!.push(index);
    }
  });
  const automaton = new AhoCorasick(patterns);

  /** The rules (by index) the message is a hit of. */
  function matchMessage(folded: string, channelId: number, date: number): number[] {
    const candidates = new Set<number>(unanchored);
    for (const pattern of automaton.search(folded)) for (const rule of rulesByPattern[pattern]!) candidates.add(rule);
    const matched: number[] = [];
    for (const index of candidates) {
      const rule = compiled[index]!;
      if (date <= rule.since) continue; // spec 3.3.3: only hits newer than last_run
      if (rule.channels && !rule.channels.has(channelId)) continue;
      if (matchesFolded(rule.args.tree, folded)) matched.push(index);
    }
    return matched;
  }

  return {
    matchMessage,

    async run(context: SourceContext, until: number, limit: number): Promise<Map<number, MatchResult>> {
      const results = compiled.map(() => ({ rows: [] as MessageRow[], total: 0 }));
      if (compiled.length === 0) return new Map();
      const since = Math.min(...compiled.map((r) => r.since));
      let afterId = 0;
      for (;;) {
        const { rows } = await sql<MessageRow & { text_folded: string }>`
          select ${MESSAGE_COLUMNS}, m.text_folded from messages m join channels c on c.id = m.channel_id
          where m.date > ${since} and m.date <= ${until} and m.id > ${afterId}
          order by m.id limit ${SCAN_PAGE}`.execute(context.db);
        for (const row of rows) {
          for (const index of matchMessage(row.text_folded, Number(row.channel_id), Number(row.date))) {
            const result = results[index]!;
            result.total++;
            result.rows.push(row);
          }
        }
        if (rows.length < SCAN_PAGE) break;
        afterId = Number(rows[rows.length - 1]!.id);
      }
      return new Map(
        compiled.map((rule, index) => {
          const { rows, total } = results[index]!;
          rows.sort((a, b) => Number(b.date) - Number(a.date) || Number(b.id) - Number(a.id));
          const { tree, uniqueOnly, contextChars } = rule.args;
          let hits = rows.slice(0, uniqueOnly ? rows.length : limit).map((row) => messageHit(row, tree, contextChars));
          if (uniqueOnly) hits = collapseIdenticalTexts(hits).slice(0, limit);
          return [rule.ruleId, { hits, total: uniqueOnly ? hits.length : total }];
        }),
      );
    },
  };
}
