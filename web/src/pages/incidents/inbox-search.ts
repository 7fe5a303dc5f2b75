import { positiveInteger } from '../rules/rules-search.ts';

export const INCIDENT_STATUSES = ['new', 'acknowledged', 'resolved', 'false_positive'] as const;
export type IncidentStatus = (typeof INCIDENT_STATUSES)[number];

/**
 * The incident inbox's address, so a filtered view can be shared and survives a reload:
 * `/incidents?status=["new"]&rule=3&source="messenger"&assignee="none"&from="2026-03-01"&page=2`.
 * Dates are UTC days (`from` inclusive, `to` inclusive); `assignee` is a user id or "none".
 */
export interface InboxSearch {
  page?: number;
  status?: IncidentStatus[];
  rule?: number;
  source?: string;
  assignee?: number | 'none';
  from?: string;
  to?: string;
}

const isDay = (value: unknown): value is string => typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value);

export function validateInboxSearch(raw: Record<string, unknown>): InboxSearch {
  const search: InboxSearch = {};
  const page = positiveInteger(raw.page);
  if (page && page > 1) search.page = page;
  const statuses = Array.isArray(raw.status)
    ? INCIDENT_STATUSES.filter((status) => (raw.status as unknown[]).includes(status))
    : [];
  if (statuses.length) search.status = statuses;
  const rule = positiveInteger(raw.rule);
  if (rule) search.rule = rule;
  if (typeof raw.source === 'string' && /^\w{1,100}$/.test(raw.source)) search.source = raw.source;
  const assignee = raw.assignee === 'none' ? 'none' : positiveInteger(raw.assignee);
  if (assignee) search.assignee = assignee;
  if (isDay(raw.from)) search.from = raw.from;
  if (isDay(raw.to)) search.to = raw.to;
  return search;
}

/** "false_positive" → "False positive". */
export const statusLabel = (status: string) => (status.charAt(0).toUpperCase() + status.slice(1)).replace('_', ' ');
