import { describe, expect, it } from 'vitest';
import { parseTimestamp } from './timestamp.ts';

describe('parseTimestamp', () => {
  it('reads ransomwatch, v2, URLTeam and date-only forms; no zone is UTC', () => {
    expect(parseTimestamp('2021-09-09 23:46:53.997398')).toBe(Date.parse('2021-09-09T23:46:53.997Z'));
    expect(parseTimestamp('2024-05-01T10:00:00.000000+00:00')).toBe(Date.parse('2024-05-01T10:00:00Z'));
    expect(parseTimestamp('2016-08-23T19:17:02.123456')).toBe(Date.parse('2016-08-23T19:17:02.123Z'));
    expect(parseTimestamp('2024-05-01T12:30:00+02:30')).toBe(Date.parse('2024-05-01T10:00:00Z'));
    expect(parseTimestamp('2024-05-01 10:00:00-0500')).toBe(Date.parse('2024-05-01T15:00:00Z'));
    expect(parseTimestamp('2024-05-01')).toBe(Date.parse('2024-05-01T00:00:00Z'));
    expect(parseTimestamp('2024-05-01 10:00')).toBe(Date.parse('2024-05-01T10:00:00Z'));
  });

  it('is null for what is no date', () => {
    for (const text of ['', 'yesterday', '2023-02-30 10:00:00', '2023-13-01', '2023-01-01 24:00:00', '1693000000'])
      expect(parseTimestamp(text), text).toBeNull();
  });
});
