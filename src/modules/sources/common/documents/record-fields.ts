/**
 * Reading one JSON record of a document source (a JSON Lines line, a Discord message, a Pastebin
 * list entry): each reader returns the field's value or throws RecordError naming the field, and
 * the ingester rejects the record with that reason.
 */
export class RecordError extends Error {}

export type JsonObject = Record<string, unknown>;

export const isJsonObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

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
      if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol)) throw new RecordError(`${name} must be an http(s) URL`);
      return value;
    },

    /** One of `values`. */
    oneOf<T extends string>(name: string, values: readonly T[]): T {
      const value = optionalString(name);
      if (value === null) throw new RecordError(`${name} is required`);
      if (!(values as readonly string[]).includes(value)) throw new RecordError(`${name} must be one of: ${values.join(', ')}`);
      return value as T;
    },
  };
}
