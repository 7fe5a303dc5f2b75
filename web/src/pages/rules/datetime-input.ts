import type { TimeZoneChoice } from '../../ui/time-zone.ts';

/**
 * A moment as the value of an `<input type="datetime-local">`: to the minute, in the reader's
 * time zone, which is how the browser reads it back (`new Date(value)`).
 */
export const datetimeLocalValue = (ms: number) =>
  new Date(ms - new Date(ms).getTimezoneOffset() * 60_000).toISOString().slice(0, 16);

/** The same in the dashboard's chosen zone (ui/time-zone.ts), so an input reads like the times shown. */
export const datetimeInputValue = (ms: number, zone: TimeZoneChoice) =>
  zone === 'utc' ? new Date(ms).toISOString().slice(0, 16) : datetimeLocalValue(ms);

/** An input's value read back in that zone, as an ISO timestamp; undefined when not a moment. */
export function datetimeInputMoment(value: string, zone: TimeZoneChoice): string | undefined {
  const ms = Date.parse(zone === 'utc' ? `${value}Z` : value);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}
