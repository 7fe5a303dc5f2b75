import { positiveInteger } from '../rules/rules-search.ts';

/**
 * The incident page's address, so a view of the hits can be shared and survives a reload:
 * `/incidents/40?filter=["channel_username:golf_a"]&sort=date&page=2&hide_excluded=true`. The
 * fields are the service's filterable and sortable fields; the server judges them.
 */
export interface IncidentSearch {
  page?: number;
  /** A sortable field, `-field` for descending; absent: newest first. */
  sort?: string;
  /** `field:value` pairs, all of which must hold. */
  filter?: string[];
  hide_excluded?: boolean;
  /**
   * The match's organization, as notification links carry it: the dashboard acts for it when the
   * account manages it, then drops it from the address (router.tsx).
   */
  org?: number;
}

const MAX_FILTERS = 20;

export function validateIncidentSearch(raw: Record<string, unknown>): IncidentSearch {
  const search: IncidentSearch = {};
  const page = positiveInteger(raw.page);
  if (page && page > 1) search.page = page;
  if (typeof raw.sort === 'string' && /^-?\w{1,100}$/.test(raw.sort)) search.sort = raw.sort;
  const filters = Array.isArray(raw.filter)
    ? raw.filter.filter((entry): entry is string => typeof entry === 'string' && /^\w+:/.test(entry))
    : [];
  if (filters.length) search.filter = filters.slice(0, MAX_FILTERS);
  if (raw.hide_excluded === true) search.hide_excluded = true;
  const org = positiveInteger(raw.org);
  if (org) search.org = org;
  return search;
}
