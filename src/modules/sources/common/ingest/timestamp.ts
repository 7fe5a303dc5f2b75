// "2021-09-09 23:46:53.997398" (ransomwatch), "2024-05-01T10:00:00.000000+00:00" (ransomware.live
// v2), "2016-08-23T19:17:02.123456" (a URLTeam #TIMESTAMP:), "2024-05-01".
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

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
  const roundTrip = [date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate(), date.getUTCHours(), date.getUTCMinutes(), date.getUTCSeconds()];
  if (roundTrip.some((value, i) => value !== fields[i])) return null;
  if (!zone || zone.toUpperCase() === 'Z') return ms;
  const sign = zone.startsWith('-') ? -1 : 1;
  const digits = zone.slice(1).replace(':', '');
  return ms - sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || 0)) * 60_000;
}
