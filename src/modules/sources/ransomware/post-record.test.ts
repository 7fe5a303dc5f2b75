import { describe, expect, it } from 'vitest';
import { readPost } from './post-record.ts';

describe('a post record', () => {
  const old = {
    post_title: 'Cornerstone Automation Systems, LLC',
    group_name: 'suncrypt',
    discovered: '2021-09-09 23:46:53.997398',
    published: '2021-09-09 23:46:53.997398',
    post_url: '',
  };

  it('reads the ransomwatch shape; empty strings are absent', () => {
    expect(readPost(old)).toEqual({
      group: 'suncrypt',
      victim: 'Cornerstone Automation Systems, LLC',
      website: null,
      description: null,
      country: null,
      activity: null,
      postUrl: null,
      permalink: null,
      publishedAt: Date.parse('2021-09-09T23:46:53.997Z'),
      listedAt: Date.parse('2021-09-09T23:46:53.997Z'),
    });
  });

  it('reads the v2 API names', () => {
    const v2 = {
      victim: 'Acme Bank PLC',
      group: 'LockBit3',
      attackdate: '2025-01-15 08:00:00.000000',
      discovered: '2025-01-16T09:30:00.123456+00:00',
      country: 'us',
      activity: 'Financial Services',
      description: 'A bank.',
      domain: 'acme-bank.com',
      claim_url: 'http://example.onion/acme',
      url: 'https://www.ransomware.live/id/QWNtZSBCYW5rQGxvY2tiaXQz',
      screenshot: 'https://images.ransomware.live/screenshots/posts/acme.png',
      press: null,
      infostealer: { employees: 3 },
    };
    expect(readPost(v2)).toEqual({
      group: 'lockbit3',
      victim: 'Acme Bank PLC',
      website: 'acme-bank.com',
      description: 'A bank.',
      country: 'US',
      activity: 'Financial Services',
      postUrl: 'http://example.onion/acme',
      permalink: 'https://www.ransomware.live/id/QWNtZSBCYW5rQGxvY2tiaXQz',
      publishedAt: Date.parse('2025-01-15T08:00:00Z'),
      listedAt: Date.parse('2025-01-16T09:30:00.123Z'),
    });
  });

  it('a date in the future or before 1990 is not kept, with a warning; the next date stands in', () => {
    const warnings: string[] = [];
    expect(
      readPost({ ...old, published: '2999-01-01 00:00:00', discovered: '1970-01-01 00:00:00' }, (reason) =>
        warnings.push(reason),
      ),
    ).toBe('published (or attackdate, or discovered) is missing or not a plausible date');
    expect(warnings).toEqual(['discovered date before 1990', 'published date in the future']);
    expect(readPost({ ...old, published: '2999-01-01 00:00:00' }, () => {})).toMatchObject({
      publishedAt: Date.parse('2021-09-09T23:46:53.997Z'),
    });
  });

  it('reads epoch milliseconds, as pandas writes dates', () => {
    expect(readPost({ ...old, published: 1631231213997, discovered: 1631231213 })).toMatchObject({
      publishedAt: 1631231213997,
      listedAt: 1631231213000,
    });
  });

  it('falls back on discovered when there is no publication date', () => {
    const { published: _published, ...noPublished } = old;
    expect(readPost(noPublished)).toMatchObject({ publishedAt: Date.parse('2021-09-09T23:46:53.997Z') });
  });

  it('says why a record is not a post', () => {
    expect(readPost([old])).toBe('not a JSON object');
    expect(readPost({ ...old, post_title: ' ' })).toBe('post_title (or victim) is missing');
    expect(readPost({ ...old, group_name: undefined })).toBe('group_name (or group) is missing');
    expect(readPost({ post_title: 'X', group_name: 'play' })).toBe(
      'published (or attackdate, or discovered) is missing or not a plausible date',
    );
    expect(readPost({ ...old, published: '09/09/2021' })).toBe(
      'published is not a date (YYYY-MM-DD HH:MM:SS[.ffffff], UTC unless a zone is given)',
    );
    expect(readPost({ ...old, website: ['a.com'] })).toBe('website must be a string');
  });
});
