/**
 * The address of the new-rule form, and the contract between the search page and the rules pages:
 * `/rules/new?service=1&name=…&args={…}&follow_up_token=…` opens the form for that catalog service
 * with those args filled in. A follow_up_token (from a search response) lets the server make the
 * rule from that search's query and options (docs/api.md "Monitoring rules"); args then only
 * show what the rule will watch.
 */
export interface NewRuleSearch {
  /** Catalog service id (spec 2.9). */
  service?: number;
  name?: string;
  args?: Record<string, unknown>;
  follow_up_token?: string;
}

/** The messenger source's catalog id (src/modules/sources/messenger: ids never change). */
export const MESSENGER_SERVICE_ID = 1;

/** Rule names are at most 255 characters (spec 2.10). */
const MAX_NAME = 255;

export function validateNewRuleSearch(raw: Record<string, unknown>): NewRuleSearch {
  const search: NewRuleSearch = {};
  if (typeof raw.service === 'number' && Number.isSafeInteger(raw.service) && raw.service > 0)
    search.service = raw.service;
  if (typeof raw.name === 'string' && raw.name) search.name = raw.name.slice(0, MAX_NAME);
  if (raw.args && typeof raw.args === 'object' && !Array.isArray(raw.args))
    search.args = raw.args as Record<string, unknown>;
  if (typeof raw.follow_up_token === 'string' && raw.follow_up_token) search.follow_up_token = raw.follow_up_token;
  return search;
}

/** The new-rule address for a messenger search, as the search page links to it. */
export function ruleFromSearch(search: {
  query: string;
  follow_up_token: string;
  channel_ids?: number[] | null;
  unique_only?: boolean;
  context_chars?: number;
}): NewRuleSearch {
  const args: Record<string, unknown> = { query: search.query };
  if (search.channel_ids?.length) args.channel_ids = search.channel_ids;
  if (search.unique_only) args.unique_only = true;
  if (search.context_chars !== undefined) args.context_chars = search.context_chars;
  return {
    service: MESSENGER_SERVICE_ID,
    name: `Messenger: ${search.query}`.slice(0, MAX_NAME),
    args,
    follow_up_token: search.follow_up_token,
  };
}

/** The new-rule address for an ad-hoc search of a source: the rule watches what was searched. */
export function ruleFromSourceSearch(
  service: { id: number; alias: string },
  args: Record<string, unknown>,
): NewRuleSearch {
  const what = Object.values(args)
    .map((value) => (Array.isArray(value) ? value.join(', ') : String(value)))
    .join(' · ');
  return { service: service.id, name: `${service.alias}: ${what}`.slice(0, MAX_NAME), args };
}
