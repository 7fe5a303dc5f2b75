/** CLI output: JSON for scripts (--json), aligned text for people. */
export interface Output {
  json: boolean;
  emit(data: unknown, text: () => string): void;
}

export function createOutput(json: boolean): Output {
  return {
    json,
    emit(data, text) {
      process.stdout.write((json ? JSON.stringify(data, null, 2) : text()) + '\n');
    },
  };
}

export function table(rows: Record<string, unknown>[], columns: string[]): string {
  if (rows.length === 0) return '(none)';
  const cell = (value: unknown) => (value === null || value === undefined ? '-' : String(value));
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => v.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(columns), ...rows.map((r) => line(columns.map((c) => cell(r[c]))))].join('\n');
}

export function keyValues(record: Record<string, unknown>): string {
  const width = Math.max(...Object.keys(record).map((k) => k.length));
  return Object.entries(record)
    .map(([k, v]) => `${k.padEnd(width)}  ${v === null || v === undefined ? '-' : String(v)}`)
    .join('\n');
}
