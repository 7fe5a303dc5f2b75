import { describe, expect, it } from 'vitest';
import { CollectorSettingsError } from '../kit/collector-settings.ts';
import { ctLogsCollector } from './ct-logs.collector.ts';

const ARGON = 'https://ct.googleapis.com/logs/us1/argon2025h2/';
const parse = (raw: Record<string, unknown>) => ctLogsCollector.parseSettings(raw);
const refusal = (raw: Record<string, unknown>) => {
  try {
    parse(raw);
  } catch (error) {
    if (error instanceof CollectorSettingsError) return error.message;
    throw error;
  }
  throw new Error('accepted');
};

describe('ct-logs settings', () => {
  it('takes log base URLs (a missing trailing slash added) and defaults the rest', () => {
    expect(parse({ logs: [ARGON, 'https://ct.cloudflare.com/logs/nimbus2025'] })).toEqual({
      logs: [ARGON, 'https://ct.cloudflare.com/logs/nimbus2025/'],
      batch_size: 256,
      max_entries_per_run: 100_000,
      timeout_ms: 30_000,
      start: 'now',
    });
    expect(
      parse({ logs: [ARGON], start: '0', batch_size: 1000, max_entries_per_run: 5, timeout_ms: 500 }),
    ).toMatchObject({ start: 0, batch_size: 1000, max_entries_per_run: 5, timeout_ms: 500 });
    expect(parse({ logs: [ARGON], start: 123_456 })).toMatchObject({ start: 123_456 });
  });

  it('names the setting that is wrong', () => {
    expect(refusal({})).toBe('logs: must list at least one CT log base URL');
    expect(refusal({ logs: [] })).toBe('logs: must list at least one CT log base URL');
    expect(refusal({ logs: [ARGON, 'ct.example.test/log/'] })).toMatch(/^logs\[1\]: must be an http\(s\) URL/);
    expect(refusal({ logs: [`${ARGON}ct/v1/get-sth?x=1`] })).toBe(
      'logs[0]: must be a base URL without query or fragment',
    );
    expect(refusal({ logs: [ARGON, ARGON.replace('https', 'http').slice(0, -1)] })).toBe(
      'logs[1]: names the same log twice',
    );
    expect(refusal({ logs: [ARGON], batch_size: 0 })).toBe('batch_size: must be an integer from 1 to 10000');
    expect(refusal({ logs: [ARGON], timeout_ms: '5s' })).toBe('timeout_ms: must be an integer from 1 to 600000');
    expect(refusal({ logs: [ARGON], start: 'yesterday' })).toBe(
      'start: must be "now" (the current tree size) or an entry index such as "0"',
    );
    expect(refusal({ logs: [ARGON], start: -1 })).toMatch(/^start: /);
    expect(refusal({ logs: [ARGON], log: ARGON })).toBe(
      'log: is not a setting of ct-logs (logs, batch_size, max_entries_per_run, timeout_ms, start)',
    );
  });
});
