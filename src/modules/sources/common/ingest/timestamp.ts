// "2021-09-09 23:46:53.997398" (ransomwatch), "2024-05-01T10:00:00.000000+00:00" (ransomware.live
// v2), "2016-08-23T19:17:02.123456" (a URLTeam #TIMESTAMP:), "2024-05-01".
const TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

/**
 * A timestamp as epoch ms; one without a zone is UTC (ransomware.live and URLTeam dumps write
 * UTC). Null when it is none.
 */
export function parseTimestamp(text: string): number | null {
  const match = TIMESTAMP.exec(text.trim());
  if (!match) return null;
  const [, year, month, day, hour = '0', minute = '0', second = '0', fraction = '', zone] = match;
  const fields = [Number(year), Number(month) - 1, Number(day), Number(hour), Number(minute), Number(second)] as const;
  const ms = Date.UTC(...fields, Number(fraction.slice(0, 3).padEnd(3, '0')));
  const date = new Date(ms);
  // Date.UTC rolls 2023-02-30 over into March: a field out of range is no date.
  const roundTrip = [
    date.getUTCFullYear(),
    date.getUTCMonth(),
    date.getUTCDate(),
    date.getUTCHours(),
    date.getUTCMinutes(),
    date.getUTCSeconds(),
  ];
  if (roundTrip.some((value, i) => value !== fields[i])) return null;
  if (!zone || zone.toUpperCase() === 'Z') return ms;
  const sign = zone.startsWith('-') ? -1 : 1;
  const digits = zone.slice(1).replace(':', '');
  return ms - sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || 0)) * 60_000;
}

/** No threat-intelligence record is older: an earlier date is a misread field (a 0, a 2-digit year). */
export const EARLIEST_PLAUSIBLE_MS = Date.UTC(1990, 0, 1);
/** How far past the server's clock a record's date may lie: clocks and time zones disagree. */
export const CLOCK_SKEW_MS = 86_400_000;

/**
 * `ms` when it can be the date of something that happened (between 1990 and now, give or take a
 * clock skew); otherwise null, and `warn` hears why (`<what> in the future`, `<what> before
 * 1990`), so the ingest report counts the value it did not store.
 */
export function plausibleTime(
  ms: number | null,
  warn: (reason: string) => void,
  what = 'date',
  now = Date.now(),
): number | null {
  if (ms === null) return null;
  if (ms > now + CLOCK_SKEW_MS) {
    warn(`${what} in the future`);
    return null;
  }
  if (ms < EARLIEST_PLAUSIBLE_MS) {
    warn(`${what} before 1990`);
    return null;
  }
  return ms;
}
