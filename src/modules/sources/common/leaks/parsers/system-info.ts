import { plausibleTime } from '../../ingest/timestamp.ts';
import type { MachineInfo } from '../credential.ts';

/**
 * A stealer log's system-information file (docs/ingest.md "System files"): `Key: value` lines,
 * bare (RedLine/META `UserInformation.txt`, Vidar/RisePro `information.txt`), as bullets
 * (`- Country: US`, `\t- OS: …` in Raccoon, StealC, Lumma), or tab-separated (macOS `sw_vers`
 * output in Atomic/AMOS logs). Values that cannot be read unambiguously are null, with a warning.
 */

/** File names (lower-cased) that describe the machine. */
export const SYSTEM_FILES = new Set([
  'system.txt',
  'information.txt',
  'userinformation.txt',
  'user information.txt',
  'system info.txt',
  'system_info.txt',
  'systeminfo.txt',
  'system information.txt',
  'info.txt',
  'sysinfo.txt',
  'userinfo.txt',
]);

export interface SystemInfoWarning {
  line: number;
  reason: string;
}

// Keys in order of preference: the first present wins whatever its line.
const COUNTRY_KEYS = ['country', 'country code', 'countrycode', 'location'];
const OS_KEYS = [
  'os',
  'operating system',
  'operation system',
  'os version',
  'windows',
  'os name',
  'product name',
  'system version',
  'productname',
  'windows version',
];
const HWID_KEYS = ['hwid', 'hardware id', 'hardware uuid', 'machineid', 'machine id'];
// Not `Install Date`: that is when Windows was installed, not when the log was taken.
const DATE_KEYS = ['log date', 'date', 'local date', 'local time', 'launched at', 'last seen', 'time'];

// An optional bullet, a key of words (`LID (Lumma ID)`), a colon, the value.
const LINE = /^[\s\-*•>]*([A-Za-z][A-Za-z0-9 _()./]{0,40}?)\s*:\s*(.*?)\s*$/;
const NO_VALUE = /^(unknown|n\/a|none|null|-+|\?+)$/i;

type Entry = { value: string; line: number };

/** The file's keys (lower-cased, parentheses and extra spaces removed), each with its first value. */
function entriesOf(text: string): Map<string, Entry> {
  const entries = new Map<string, Entry>();
  text.split(/\r?\n/).forEach((raw, index) => {
    const match = LINE.exec(raw);
    if (!match || match[2] === '' || NO_VALUE.test(match[2]!)) return;
    const key = match[1]!
      .toLowerCase()
      .replace(/\(.*?\)/g, '')
      .replace(/\s+/g, ' ')
      .trim();
    if (!entries.has(key)) entries.set(key, { value: match[2]!, line: index + 1 });
  });
  return entries;
}

const firstOf = (entries: Map<string, Entry>, keys: string[]): [string, Entry] | null => {
  for (const key of keys) {
    const entry = entries.get(key);
    if (entry) return [key, entry];
  }
  return null;
};

let countryNames: Map<string, string> | null = null;

/** English region names to ISO codes ("Germany" → DE), built once from the runtime's ICU data. */
function countryByName(name: string): string | null {
  if (!countryNames) {
    countryNames = new Map();
    const names = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });
    for (let a = 65; a <= 90; a++) {
      for (let b = 65; b <= 90; b++) {
        const code = String.fromCharCode(a, b);
        const label = names.of(code);
        if (label) countryNames.set(label.toLowerCase(), code);
      }
    }
  }
  return countryNames.get(name.toLowerCase()) ?? null;
}

function countryOf(key: string, value: string): string | null | undefined {
  // "US", "[US]", "US (United States)", "DE - Berlin"
  const code = /^\[?([A-Za-z]{2})\]?(?:$|[\s(,;|-])/.exec(value);
  if (code) return code[1]!.toUpperCase();
  // A Location line is a city or coordinates unless it is a code: "Georgia" may be the US state.
  if (key === 'location') return null;
  return countryByName(value.replace(/\s*\(.*\)$/, '')) ?? undefined;
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const monthOf = (name: string) => MONTHS.indexOf(name.slice(0, 3).toLowerCase()) + 1;

/** How a log orders the day and month of a numeric date, when its family fixes it. */
export type DateOrder = 'day-first' | 'unknown';

export type LogDate = { ms: number } | { ms: null; reason: string };

const NOT_UNDERSTOOD: LogDate = { ms: null, reason: 'log date not understood' };
const INVALID: LogDate = { ms: null, reason: 'log date is not a valid date' };

const YEAR_FIRST = /^(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(.*)$/;
const NUMERIC = /^(\d{1,2})([-/.])(\d{1,2})\2(\d{4})(.*)$/;
// ctime as Vidar and RisePro write it: "Sat Jul 06 3:43:57 2024"; also "Jul 6, 2024 3:43:57".
const MONTH_FIRST_NAMED =
  /^(?:[A-Za-z]{3,9},?\s+)?([A-Za-z]{3,9})\.?\s+(\d{1,2}),?\s+(?:(\d{1,2}:\d{1,2}(?::\d{1,2})?)\s+)?(\d{4})(.*)$/;
// "30 Jul 2025 13:42:43", "Wed, 30 Jul 2025 13:42:43 GMT"
const DAY_FIRST_NAMED = /^(?:[A-Za-z]{3,9},?\s+)?(\d{1,2})\s+([A-Za-z]{3,9})\.?,?\s+(\d{4})(.*)$/;
const CLOCK = /^\s*(?:-\s*|T|,\s*)?(\d{1,2}):(\d{1,2})(?::(\d{1,2}))?(?:[.,]\d+)?\s*(?:([AaPp])\.?[Mm]\.?)?/;

/** Epoch ms of a calendar date and clock text (read as UTC), or null when a field is out of range. */
function utc(year: number, month: number, day: number, clock: string): number | null {
  let [hour, minute, second] = [0, 0, 0];
  const time = CLOCK.exec(clock);
  if (time) {
    [hour, minute, second] = [Number(time[1]), Number(time[2]), Number(time[3] ?? 0)];
    const meridiem = time[4]?.toLowerCase();
    if (meridiem && (hour < 1 || hour > 12)) return null;
    if (meridiem === 'p' && hour < 12) hour += 12;
    if (meridiem === 'a' && hour === 12) hour = 0;
  }
  const ms = Date.UTC(year, month - 1, day, hour, minute, second);
  const date = new Date(ms);
  // Date.UTC rolls 31/02 over into March: a field out of range is no date.
  const same =
    date.getUTCFullYear() === year &&
    date.getUTCMonth() === month - 1 &&
    date.getUTCDate() === day &&
    date.getUTCHours() === hour &&
    date.getUTCMinutes() === minute;
  return same && second < 60 ? ms : null;
}

const dated = (ms: number | null): LogDate => (ms === null ? INVALID : { ms });

/**
 * A log date as stealers write it, read as UTC (the logs give local time, mostly without a
 * zone). A numeric date is read year-first, day-first when dotted (no locale writes `MM.DD.YYYY`)
 * or when `order` says the family writes it so, and otherwise from whichever field exceeds 12;
 * when both could be the month and they differ, the date is ambiguous.
 */
export function parseLogDate(value: string, order: DateOrder = 'unknown'): LogDate {
  const text = value.trim();
  const yearFirst = YEAR_FIRST.exec(text);
  if (yearFirst) return dated(utc(Number(yearFirst[1]), Number(yearFirst[2]), Number(yearFirst[3]), yearFirst[4]!));
  const numeric = NUMERIC.exec(text);
  if (numeric) {
    const [first, second, year] = [Number(numeric[1]), Number(numeric[3]), Number(numeric[4])];
    const dayFirst = numeric[2] === '.' || order === 'day-first' || first > 12 || first === second;
    if (!dayFirst && second <= 12) return { ms: null, reason: 'log date is ambiguous (day-first or month-first)' };
    return dated(dayFirst ? utc(year, second, first, numeric[5]!) : utc(year, first, second, numeric[5]!));
  }
  const monthFirst = MONTH_FIRST_NAMED.exec(text);
  if (monthFirst && monthOf(monthFirst[1]!) > 0) {
    return dated(
      utc(Number(monthFirst[4]), monthOf(monthFirst[1]!), Number(monthFirst[2]), monthFirst[3] ?? monthFirst[5]!),
    );
  }
  const dayFirst = DAY_FIRST_NAMED.exec(text);
  if (dayFirst && monthOf(dayFirst[2]!) > 0)
    return dated(utc(Number(dayFirst[3]), monthOf(dayFirst[2]!), Number(dayFirst[1]), dayFirst[4]!));
  return NOT_UNDERSTOOD;
}

/**
 * Vidar and its forks (RisePro, Mars, Arkei) write `information.txt` with `MachineID`, `GUID`
 * and `Work Dir`, and their `Local Time` day-first (`30/7/2025 13:42:43`).
 */
const dateOrderOf = (entries: Map<string, Entry>): DateOrder =>
  entries.has('work dir') || (entries.has('machineid') && entries.has('guid')) ? 'day-first' : 'unknown';

function osOf(entries: Map<string, Entry>): string | null {
  const found = firstOf(entries, OS_KEYS);
  if (!found) return null;
  const [key, { value }] = found;
  // sw_vers: "ProductName: macOS" and "ProductVersion: 14.5" are one OS.
  const version = key === 'productname' ? entries.get('productversion')?.value : undefined;
  return (version ? `${value} ${version}` : value).slice(0, 120);
}

/** Country, OS, HWID and log date from a system file, and the values it could not read. */
export function parseSystemInfo(
  text: string,
  now = Date.now(),
): { machine: MachineInfo; warnings: SystemInfoWarning[] } {
  const entries = entriesOf(text);
  const warnings: SystemInfoWarning[] = [];
  const machine: MachineInfo = {
    country: null,
    os: osOf(entries),
    infectedAt: null,
    hwid: firstOf(entries, HWID_KEYS)?.[1].value.slice(0, 120) ?? null,
  };

  const country = firstOf(entries, COUNTRY_KEYS);
  if (country) {
    const code = countryOf(country[0], country[1].value);
    if (code === undefined) warnings.push({ line: country[1].line, reason: 'country is not a country code or name' });
    machine.country = code ?? null;
  }

  const date = firstOf(entries, DATE_KEYS);
  if (date) {
    const { line, value } = date[1];
    const read = parseLogDate(value, dateOrderOf(entries));
    if (read.ms === null) warnings.push({ line, reason: read.reason });
    machine.infectedAt = plausibleTime(read.ms, (reason) => warnings.push({ line, reason }), 'log date', now);
  }
  return { machine, warnings };
}
