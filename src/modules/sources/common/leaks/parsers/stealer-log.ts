import type { CredentialRecord, MachineInfo } from '../credential.ts';

/**
 * Stealer-log files (docs/ingest.md "Stealer logs"): one folder per infected machine, holding
 * a passwords file in the RedLine, Raccoon or Vidar layout and a system-information file.
 */

/** File names (lower-cased) that hold saved passwords. */
export const PASSWORD_FILES = new Set(['passwords.txt', 'all passwords.txt', 'password.txt', '_allpasswords_list.txt']);
/** File names (lower-cased) that describe the machine. */
export const SYSTEM_FILES = new Set(['system.txt', 'information.txt', 'userinformation.txt', 'system info.txt', 'info.txt']);

type Field = 'url' | 'login' | 'password' | 'software';

// A Map: keys come from the log's lines, and a line "constructor: x" must not find Object's.
const FIELD_KEYS = new Map<string, Field>([
  ['url', 'url'],
  ['host', 'url'],
  ['hostname', 'url'],
  ['login', 'login'],
  ['user', 'login'],
  ['username', 'login'],
  ['user login', 'login'],
  ['password', 'password'],
  ['pass', 'password'],
  ['user password', 'password'],
  ['soft', 'software'],
  ['browser', 'software'],
  ['application', 'software'],
  ['storage', 'software'],
]);

const KEY_LINE = /^\s*([A-Za-z][A-Za-z ]{0,20}?)\s*:\s?(.*)$/;
// "=====", "-----", "*****  Telegram: @seller  *****": separators and seller banners.
const SEPARATOR = /^\s*([=\-*_#~]{3,}|[=\-*_#~]{3,}.*[=\-*_#~]{3,})\s*$/;

export interface BlockResult {
  record?: CredentialRecord;
  /** Line number where the block started; set with `reason` for a block that is not a credential. */
  line: number;
  reason?: string;
}

/**
 * Reads a passwords file line by line (push a line, get the blocks it completed; `end` flushes
 * the last). A block ends at a blank line, a separator, or when a field it already has starts
 * again (logs that put no blank line between entries). Unknown lines inside a block are ignored.
 */
export function createPasswordBlockReader(machine: MachineInfo | null) {
  let fields: Partial<Record<Field, string>> = {};
  let startLine = 0;

  function flush(): BlockResult[] {
    const seen = Object.keys(fields).length;
    const { url, login, password, software } = fields;
    const at = startLine;
    fields = {};
    if (seen === 0) return [];
    if (!login) return [{ line: at, reason: 'block without a login' }];
    if (password === undefined || password === '') return [{ line: at, reason: 'block without a password' }];
    return [{ line: at, record: { url: url && url.toUpperCase() !== 'UNKNOWN' ? url : null, login, password, software: software ?? null, machine } }];
  }

  return {
    push(line: string, number: number): BlockResult[] {
      if (line.trim() === '' || SEPARATOR.test(line)) return flush();
      const match = KEY_LINE.exec(line);
      const field = match ? FIELD_KEYS.get(match[1]!.toLowerCase()) : undefined;
      if (!field) return [];
      const done = fields[field] !== undefined ? flush() : [];
      if (Object.keys(fields).length === 0) startLine = number;
      // A password keeps its spaces; other values are trimmed.
      fields[field] = field === 'password' ? match![2]!.replace(/\r$/, '') : match![2]!.trim();
      return done;
    },
    end: flush,
    /** The first line of the block being read, or null between blocks (a safe place to resume). */
    openedAt: (): number | null => (Object.keys(fields).length ? startLine : null),
  };
}

const COUNTRY_KEYS = new Set(['country', 'location', 'country code']);
const OS_KEYS = new Set(['os', 'windows', 'operating system', 'os version']);
const DATE_KEYS = new Set(['log date', 'date', 'install date', 'local date', 'time']);

/** A log date as stealers write it: ISO-like, or US "M/D/YYYY h:mm:ss AM" (read as UTC). */
export function parseLogDate(value: string): number | null {
  const text = value.trim();
  const us = /^(\d{1,2})[/.](\d{1,2})[/.](\d{4})\s+(\d{1,2}):(\d{2})(?::(\d{2}))?\s*(AM|PM)?/i.exec(text);
  if (us) {
    let hour = Number(us[4]);
    if (us[7]?.toUpperCase() === 'PM' && hour < 12) hour += 12;
    if (us[7]?.toUpperCase() === 'AM' && hour === 12) hour = 0;
    const ms = Date.UTC(Number(us[3]), Number(us[1]) - 1, Number(us[2]), hour, Number(us[5]), Number(us[6] ?? 0));
    return Number.isFinite(ms) ? ms : null;
  }
  const iso = /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2}))?)?/.exec(text);
  if (iso) {
    const ms = Date.UTC(Number(iso[1]), Number(iso[2]) - 1, Number(iso[3]), Number(iso[4] ?? 0), Number(iso[5] ?? 0), Number(iso[6] ?? 0));
    return Number.isFinite(ms) ? ms : null;
  }
  return null;
}

/** Country, OS and infection date from a system-information file's `Key: value` lines. */
export function parseSystemInfo(text: string): MachineInfo {
  const info: MachineInfo = { country: null, os: null, infectedAt: null };
  for (const line of text.split(/\r?\n/)) {
    const match = /^\s*([A-Za-z][A-Za-z ]{0,30}?)\s*:\s*(.+?)\s*$/.exec(line);
    if (!match) continue;
    const key = match[1]!.toLowerCase();
    const value = match[2]!;
    if (COUNTRY_KEYS.has(key) && info.country === null) info.country = value.split(/[\s(,]/, 1)[0]!.toUpperCase().slice(0, 8) || null;
    else if (OS_KEYS.has(key) && info.os === null) info.os = value.slice(0, 120);
    else if (DATE_KEYS.has(key) && info.infectedAt === null) info.infectedAt = parseLogDate(value);
  }
  return info;
}
