import { describe, expect, it } from 'vitest';
import { scrapedDate } from './record-fields.ts';

/** What scrapedDate makes of `value`: the ISO date, or the warning it gave instead. */
const read = (value: unknown) => {
  const warnings: string[] = [];
  const ms = scrapedDate(value, (reason) => warnings.push(reason), 'posted_at');
  return ms === null ? (warnings[0] ?? null) : new Date(ms).toISOString();
};

describe('scrapedDate', () => {
  it('reads ISO dates, epochs and named months as written', () => {
    expect(read('2025-11-04T10:15:00Z')).toBe('2025-11-04T10:15:00.000Z');
    expect(read(1_762_251_300)).toBe('2025-11-04T10:15:00.000Z');
    expect(read(1_762_251_300_000)).toBe('2025-11-04T10:15:00.000Z');
    expect(read('Nov 4, 2025 at 10:15 AM')).toBe('2025-11-04T10:15:00.000Z');
  });

  it('reads a numeric date when only one order fits: year first, or a field over 12', () => {
    expect(read('2025/11/04')).toBe('2025-11-04T00:00:00.000Z');
    expect(read('2025.11.04 10:15')).toBe('2025-11-04T10:15:00.000Z');
    expect(read('30/07/2025 13:42:43')).toBe('2025-07-30T13:42:43.000Z');
    expect(read('07/30/2025')).toBe('2025-07-30T00:00:00.000Z');
    expect(read('05.05.2025')).toBe('2025-05-05T00:00:00.000Z');
  });

  it('stores no date it would have to guess or that does not exist, and says why', () => {
    expect(read('03/04/2025')).toBe('posted_at is ambiguous (day-first or month-first)');
    expect(read('04/11/25')).toBe('posted_at is ambiguous (day-first or month-first)');
    expect(read('2025/02/30')).toBe('posted_at is not a date');
    expect(read('31/31/2025')).toBe('posted_at is not a date');
    expect(read('yesterday')).toBe('posted_at is not a date');
  });
});
