import { timeZoneChoice } from './time-zone.ts';

/** Formats for each choice of zone, made once: an Intl.DateTimeFormat is costly to build. */
const formats = (timeZone: string | undefined) => ({
  // Every time says its zone ("UTC", "CET", "GMT-4"): a reader must never guess.
  dateTime: new Intl.DateTimeFormat(undefined, {
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    timeZoneName: 'short',
    timeZone,
  }),
  day: new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', timeZone }),
});
const byChoice = { local: formats(undefined), utc: formats('UTC') };

const format = (kind: 'dateTime' | 'day', at: string | number | Date) =>
  byChoice[timeZoneChoice()][kind].format(new Date(at));

/** An API timestamp in the reader's chosen zone (local or UTC), naming the zone; "never" for null. */
export const formatDateTime = (at: string | number | null | undefined) =>
  at === null || at === undefined || at === '' ? 'never' : format('dateTime', at);

/** The day alone ("10 Mar"), in the chosen zone: chart axes, beside a full time elsewhere. */
export const formatDay = (at: number) => format('day', at);

/** "1 hit", "3 hits". */
export const plural = (count: number, one: string, many = `${one}s`) =>
  `${count.toLocaleString()} ${count === 1 ? one : many}`;

/** Seconds until a window resets, as a reader wants it: "in 3 h 20 min". */
export function resetIn(seconds: number): string {
  if (seconds < 60) return `in ${seconds} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `in ${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `in ${hours} h${minutes % 60 ? ` ${minutes % 60} min` : ''}`;
  return `in ${Math.round(hours / 24)} days`;
}
