/**
 * Reading one JSON record of a document source (a JSON Lines line, a Discord message, a Pastebin
 * list entry): each reader returns the field's value or throws RecordError naming the field, and
 * the ingester rejects the record with that reason.
 */
export class RecordError extends Error {}

export type JsonObject = Record<string, unknown>;

export const isJsonObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The first of `names` that a scraper's `record` has as a non-blank string or a safe integer, as a string. */
export function firstOf(record: JsonObject, names: readonly string[]): string | null {
  for (const name of names) {
    const value = record[name];
    if (typeof value === 'string' && value.trim() !== '') return value.trim();
    if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  }
  return null;
}

/** `value` when it is an http(s) URL, else null: scrapers write relative links and placeholders. */
export const httpUrl = (value: string | null): string | null =>
  value !== null && URL.canParse(value) && /^https?:$/.test(new URL(value).protocol) ? value : null;

const ISO_8601 = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;
const EPOCH_SECONDS = /^\d{1,12}$/;

/**
 * A date written as ISO 8601 (a time without a zone is UTC) or as epoch seconds (a number or a
 * string of digits, as Pastebin writes them), in epoch ms; null when it is neither.
 */
export function parseDate(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? Math.round(value * 1000) : null;
  if (typeof value !== 'string') return null;
  const text = value.trim();
  if (EPOCH_SECONDS.test(text)) return Number(text) * 1000;
  const match = ISO_8601.exec(text);
  if (!match) return null;
  const zoned = text.includes(':') && match[1] === undefined ? `${text}Z` : text;
  const ms = Date.parse(zoned.replace(' ', 'T').replace(',', '.'));
  return Number.isFinite(ms) ? ms : null;
}

/** The readers of one record's fields. */
export function recordFields(record: JsonObject) {
  const present = (name: string) => record[name] !== undefined && record[name] !== null;

  const optionalString = (name: string): string | null => {
    if (!present(name)) return null;
    const value = record[name];
    if (typeof value !== 'string') throw new RecordError(`${name} must be a string`);
    return value.trim() === '' ? null : value;
  };

  return {
    optionalString,

    /** A string that is not blank. */
    string(name: string): string {
      const value = optionalString(name);
      if (value === null) throw new RecordError(`${name} is required`);
      return value;
    },

    /** An id written as a string or an integer, kept as a string. */
    id(name: string): string {
      const value = record[name];
      if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
      if (typeof value === 'string' && value.trim() !== '') return value.trim();
      if (!present(name)) throw new RecordError(`${name} is required`);
      throw new RecordError(`${name} must be a string or an integer`);
    },

    /** A date (see parseDate), in epoch ms. */
    date(name: string): number {
      if (!present(name)) throw new RecordError(`${name} is required`);
      const ms = parseDate(record[name]);
      if (ms === null) throw new RecordError(`${name} must be an ISO 8601 date or epoch seconds`);
      return ms;
    },

    /** An http(s) URL. */
    url(name: string): string {
      const value = optionalString(name);
      if (value === null) throw new RecordError(`${name} is required`);
      if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol))
        throw new RecordError(`${name} must be an http(s) URL`);
      return value;
    },

    /** One of `values`. */
    oneOf<T extends string>(name: string, values: readonly T[]): T {
      const value = optionalString(name);
      if (value === null) throw new RecordError(`${name} is required`);
      if (!(values as readonly string[]).includes(value))
        throw new RecordError(`${name} must be one of: ${values.join(', ')}`);
      return value as T;
    },
  };
}

const MONTH_NAMES = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
// "Mar 3, 2015", "March 3, 2015 at 10:15 AM", "3 March 2015, 10:15": the month is named, so
// the date is unambiguous.
const NAMED_MONTH =
  /^(?:(?<m1>[a-z]{3,9})\.? (?<d1>\d{1,2}),? (?<y1>\d{4})|(?<d2>\d{1,2}) (?<m2>[a-z]{3,9})\.?,? (?<y2>\d{4}))(?:,? (?:at )?(?<h>\d{1,2}):(?<min>\d{2})(?::(?<s>\d{2}))? ?(?<ampm>am|pm)?)?$/i;
const NUMERIC_DATE = /^(\d{1,4})[./-](\d{1,2})[./-](\d{1,4})(?:,?[ T](\d{1,2}):(\d{2})(?::(\d{2}))?)?$/;

/**
 * A date written in numbers: year first (2025/11/04) is year, month, day; with the year last, the
 * field over 12 is the day (30/07/2025 and 07/30/2025 are one date), and equal fields read alike.
 * 'ambiguous' when either order fits (03/04/2025), null when it is no date at all.
 */
function numericDate(text: string): number | 'ambiguous' | null {
  const match = NUMERIC_DATE.exec(text);
  if (!match) return null;
  const [first, second, third] = [match[1]!, Number(match[2]), match[3]!];
  let year: number, month: number, day: number;
  if (first.length === 4) [year, month, day] = [Number(first), second, Number(third)];
  else if (third.length === 4) {
    const a = Number(first);
    if (a > 12 || a === second) [year, month, day] = [Number(third), second, a];
    else if (second > 12) [year, month, day] = [Number(third), a, second];
    else return 'ambiguous';
  } else return 'ambiguous';
  const [hour, minute, secondOfMinute] = [Number(match[4] ?? 0), Number(match[5] ?? 0), Number(match[6] ?? 0)];
  const ms = Date.UTC(year, month - 1, day, hour, minute, secondOfMinute);
  const date = new Date(ms);
  // Date.UTC rolls 2025/02/30 over into March: a field out of range is no date.
  const exact =
    date.getUTCMonth() === month - 1 && date.getUTCDate() === day && hour < 24 && minute < 60 && secondOfMinute < 60;
  return exact ? ms : null;
}

function namedMonthDate(text: string): number | null {
  const match = NAMED_MONTH.exec(text);
  if (!match?.groups) return null;
  const g = match.groups;
  const month = MONTH_NAMES.indexOf((g.m1 ?? g.m2)!.slice(0, 3).toLowerCase());
  if (month === -1) return null;
  const [year, day] = [Number(g.y1 ?? g.y2), Number(g.d1 ?? g.d2)];
  let hour = Number(g.h ?? 0);
  if (g.ampm) hour = (hour % 12) + (g.ampm.toLowerCase() === 'pm' ? 12 : 0);
  const ms = Date.UTC(year, month, day, hour, Number(g.min ?? 0), Number(g.s ?? 0));
  // Date.UTC rolls Feb 30 over into March: a field out of range is no date.
  return new Date(ms).getUTCDate() === day && hour < 24 ? ms : null;
}

/**
 * A date as scrapers write it: ISO 8601 or epoch seconds (parseDate), epoch milliseconds, or with
 * the month named ("Mar 3, 2015"), or in numbers where only one reading fits (numericDate); null
 * when it is none of these, and `warn` hears why: 03/04/2025 may be day-first or month-first, and
 * is not guessed.
 */
export function scrapedDate(value: unknown, warn: (reason: string) => void, what: string): number | null {
  if (value === undefined || value === null || value === '') return null;
  if (typeof value === 'number' && value > 1e11) return Number.isFinite(value) ? Math.round(value) : null;
  const text = typeof value === 'string' ? value.trim() : null;
  const ms = parseDate(value) ?? (text === null ? null : (namedMonthDate(text) ?? numericDate(text)));
  if (typeof ms === 'number') return ms;
  warn(ms === 'ambiguous' ? `${what} is ambiguous (day-first or month-first)` : `${what} is not a date`);
  return null;
}
