import { describe, expect, it } from 'vitest';
import { CollectorSettingsError } from '../kit/collector-settings.ts';
import { DEFAULT_FEED_URL, ransomwareLiveCollector } from './ransomware-live.collector.ts';

/** The collector's settings; test/sources/ransomware-collector.test.ts runs it. */
describe('ransomware-live settings', () => {
  const settingError = (raw: Record<string, unknown>) => {
    try {
      ransomwareLiveCollector.parseSettings(raw);
    } catch (error) {
      if (error instanceof CollectorSettingsError) return error.message;
      throw error;
    }
    return null;
  };

  it('default to the v2 recent victims and a minute', () => {
    expect(ransomwareLiveCollector.parseSettings({})).toEqual({ url: DEFAULT_FEED_URL, timeout_ms: 60_000 });
    expect(
      ransomwareLiveCollector.parseSettings({ url: 'https://data.ransomware.live/posts.json', timeout_ms: 5000 }),
    ).toEqual({
      url: 'https://data.ransomware.live/posts.json',
      timeout_ms: 5000,
    });
  });

  it('name the setting that is wrong', () => {
    expect(settingError({ url: 'file:///etc/passwd' })).toBe('url: must be an http(s) URL');
    expect(settingError({ url: 'not a url' })).toBe('url: must be an http(s) URL');
    expect(settingError({ timeout_ms: 0 })).toBe('timeout_ms: must be an integer from 1 to 600000');
    expect(settingError({ timeout_ms: '5000' })).toBe('timeout_ms: must be an integer from 1 to 600000');
    expect(settingError({ urls: ['https://x.test/'] })).toBe(
      'urls: is not a setting of ransomware-live (url, timeout_ms)',
    );
  });
});
