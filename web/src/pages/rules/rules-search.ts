import { notFound } from '@tanstack/react-router';

/**
 * The rule list's address: `/rules?deleted=true&page=2&recipient=3` (spec 4.5 list filters:
 * include_deleted and the rules attached to one recipient, sender, template or webhook).
 */
export interface RulesSearch {
  deleted?: boolean;
  page?: number;
  recipient?: number;
  sender?: number;
  template?: number;
  webhook?: number;
}

export const positiveInteger = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : undefined;

export function validateRulesSearch(raw: Record<string, unknown>): RulesSearch {
  const search: RulesSearch = {};
  if (raw.deleted === true) search.deleted = true;
  const page = positiveInteger(raw.page);
  if (page && page > 1) search.page = page;
  for (const key of ['recipient', 'sender', 'template', 'webhook'] as const) {
    const id = positiveInteger(raw[key]);
    if (id) search[key] = id;
  }
  return search;
}

/** A path segment that must be a positive id (/rules/12, /incidents/40); anything else is "not found". */
export function idParam(raw: string): number {
  const id = /^\d{1,15}$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(id) || id < 1) throw notFound();
  return id;
}
