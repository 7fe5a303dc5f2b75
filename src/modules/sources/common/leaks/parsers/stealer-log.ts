import type { CredentialRecord, MachineInfo } from '../credential.ts';

/**
 * Stealer-log files (docs/ingest.md "Stealer logs"): one folder per infected machine, holding
 * a passwords file in the RedLine, Raccoon or Vidar layout and a system-information file
 * (system-info.ts).
 */

/** File names (lower-cased) that hold saved passwords. */
export const PASSWORD_FILES = new Set(['passwords.txt', 'all passwords.txt', 'password.txt', '_allpasswords_list.txt']);

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
    return [
      {
        line: at,
        record: {
          url: url && url.toUpperCase() !== 'UNKNOWN' ? url : null,
          login,
          password,
          software: software ?? null,
          machine,
        },
      },
    ];
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

/** Whether a text (the start of a file) holds a whole passwords-file block: a stealer log's. */
export function holdsPasswordBlock(head: string): boolean {
  const reader = createPasswordBlockReader(null);
  const lines = head.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) if (reader.push(lines[i]!, i + 1).some((block) => block.record)) return true;
  return reader.end().some((block) => block.record);
}
