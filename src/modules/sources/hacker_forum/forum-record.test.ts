import { describe, expect, it } from 'vitest';
import { orReason } from '../common/documents/document-ingest.ts';
import { forumPostDocument } from './forum-record.ts';

const post = (overrides: Record<string, unknown> = {}) => ({
  forum: 'XSS',
  section: 'Access',
  thread_id: 91742,
  thread_title: 'Acme Bank (US) corporate network access',
  post_id: '640118',
  author: 'initaccess',
  date: '2026-03-09T14:02:00+03:00',
  title: 'Acme Bank (US) corporate network access',
  body: 'RDP to 3 hosts, domain user.',
  url: 'https://xss.is/threads/91742/post-640118',
  content_type: 'thread',
  language: 'EN',
  ...overrides,
});

const reasonOf = (value: unknown) => orReason(() => forumPostDocument(value));

describe('forum post records', () => {
  it('a thread is found by its title and body; the forum is kept lower-case and keys the post', () => {
    expect(forumPostDocument(post())).toEqual({
      key: 'xss:640118',
      text: 'Acme Bank (US) corporate network access\nRDP to 3 hosts, domain user.',
      fields: {
        post_id: '640118',
        thread_id: '91742',
        forum: 'xss',
        section: 'Access',
        content_type: 'thread',
        thread_title: 'Acme Bank (US) corporate network access',
        title: 'Acme Bank (US) corporate network access',
        author: 'initaccess',
        language: 'en',
        url: 'https://xss.is/threads/91742/post-640118',
        posted_at: '2026-03-09T11:02:00.000Z',
      },
    });
  });

  it("a reply is found by its own title and body, not by its thread's title; a date without a zone is UTC", () => {
    const reply = forumPostDocument(
      post({
        content_type: 'post',
        post_id: 640119,
        title: 'Re: price',
        body: 'pm sent',
        date: '2026-03-09 15:00',
        language: null,
      }),
    );
    expect(reply).toMatchObject({
      key: 'xss:640119',
      text: 'Re: price\npm sent',
      fields: { title: 'Re: price', language: null, posted_at: '2026-03-09T15:00:00.000Z' },
    });
    expect(forumPostDocument(post({ content_type: 'marketplace', title: undefined, date: 1773064920 })).text).toBe(
      'Acme Bank (US) corporate network access\nRDP to 3 hosts, domain user.',
    );
  });

  it('rejects a record with the field at fault', () => {
    expect(reasonOf(['not', 'an', 'object'])).toBe('not a JSON object');
    expect(reasonOf(post({ forum: '  ' }))).toBe('forum is required');
    expect(reasonOf(post({ content_type: 'reply' }))).toBe('content_type must be one of: thread, post, marketplace');
    expect(reasonOf(post({ date: '09/03/2026' }))).toBe('date must be an ISO 8601 date or epoch seconds');
    expect(reasonOf(post({ url: 'javascript:alert(1)' }))).toBe('url must be an http(s) URL');
    expect(reasonOf(post({ post_id: 1.5 }))).toBe('post_id must be a string or an integer');
    expect(reasonOf(post({ body: '', title: null }))).toBe('body is required');
    expect(reasonOf(post({ author: 7 }))).toBe('author must be a string');
    expect(reasonOf(post({ language: 'English (US)' }))).toBe('language must be a language code such as en or ru');
  });
});
