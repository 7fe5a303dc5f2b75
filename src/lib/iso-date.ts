/**
 * Timestamps are stored as epoch milliseconds and leave the API as ISO 8601 strings. PostgreSQL hands a
 * bigint column back as a string, hence the Number() before the Date.
 */
type EpochMilliseconds = number | string;

export const isoDate = (ms: EpochMilliseconds): string => new Date(Number(ms)).toISOString();

/** A timestamp that may be unset (a rule never run, a column the source left empty) stays null. */
export const isoDateOrNull = (ms: EpochMilliseconds | null | undefined): string | null =>
  ms === null || ms === undefined ? null : isoDate(ms);

/** UTC spelt as an offset (+00:00) rather than `Z`: the webhook payloads (spec 6.2) and the exports of Discord. */
export const isoDateWithOffset = (at: Date | number): string => new Date(at).toISOString().replace('Z', '+00:00');
