import { formatDateTime } from '../../ui/format.ts';

/**
 * How the incident page shows a hit: the hits of every source are `{id, is_excluded, hit_key,
 * ...the source's result fields}` (docs/api.md "Matches and exclusions"), so fields are listed
 * generically, long texts as blocks.
 */
export type Hit = { id: number; is_excluded: boolean; hit_key: string } & Record<string, unknown>;

/**
 * A hit as the presenters take it: a stored one, or a preview's (the ad-hoc source search), which
 * has no `id` and so nothing to reveal or open in context by.
 */
export type PresentedHit = { id?: number; is_excluded: boolean; hit_key: string } & Record<string, unknown>;

/** The exclusion field that names one hit (src/modules/rules/rule-runner.ts HIT_KEY_FIELD). */
export const HIT_KEY = 'hit_key';

const OWN_FIELDS = new Set(['id', 'is_excluded', HIT_KEY]);
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})$/;
const LONG_TEXT = 160;

export interface HitField {
  name: string;
  text: string;
  /** A long or multi-line text, shown as a block under the short fields. */
  block: boolean;
}

/** A field value as text: dates in the reader's chosen zone, lists joined, yes/no for booleans. */
export function fieldText(value: unknown): string {
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (typeof value === 'string' && ISO_TIME.test(value)) return formatDateTime(value);
  if (Array.isArray(value)) return value.map(fieldText).join(', ');
  if (value !== null && typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/**
 * The source fields of a hit worth showing, in the source's order: empty ones are left out, and
 * so is a field that repeats an earlier one (a messenger text and its preview of a short message).
 */
export function hitFields(hit: PresentedHit): HitField[] {
  const shown = new Set<string>();
  const fields: HitField[] = [];
  for (const [name, value] of Object.entries(hit)) {
    if (
      OWN_FIELDS.has(name) ||
      value === null ||
      value === undefined ||
      value === '' ||
      (Array.isArray(value) && value.length === 0)
    )
      continue;
    const text = fieldText(value);
    if (typeof value === 'string' && shown.has(text)) continue;
    shown.add(text);
    fields.push({ name, text, block: typeof value === 'string' && (text.length > LONG_TEXT || text.includes('\n')) });
  }
  return fields;
}

/**
 * Whether an exclusion covers this hit, as the server decides (rule-runner.ts isExcluded): the
 * hit's key exactly, or a field's value ignoring case.
 */
export function excludes(exclusion: { field: string; value: string }, hit: Hit): boolean {
  if (exclusion.field === HIT_KEY) return hit.hit_key === exclusion.value;
  const value = hit[exclusion.field];
  return value !== null && value !== undefined && String(value).toLowerCase() === exclusion.value.toLowerCase();
}
