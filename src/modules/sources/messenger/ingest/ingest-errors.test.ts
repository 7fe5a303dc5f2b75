import { describe, expect, it } from 'vitest';
import { linksInText } from './ingest-errors.ts';

describe('linksInText', () => {
  it('finds each http(s) URL once, in order, with trailing punctuation trimmed', () => {
    expect(linksInText('see https://a.example/x?y=1. and (http://b.example/) or HTTPS://C.EXAMPLE!')).toEqual([
      'https://a.example/x?y=1',
      'http://b.example/',
      'HTTPS://C.EXAMPLE',
    ]);
  });

  it('keeps a URL inside another URL as part of it, and the next one after it', () => {
    expect(linksInText('https://a.example/?u=http://b.example https://c.example')).toEqual([
      'https://a.example/?u=http://b.example',
      'https://c.example',
    ]);
  });

  it('needs the scheme to start a word and to be http or https', () => {
    expect(linksInText('xhttp://a.example _https://b.example ftp://c.example htp://d.example a://b')).toEqual([]);
    expect(linksInText('http:// https://')).toEqual([]);
    expect(linksInText('é https://ü.example/ä).')).toEqual(['https://ü.example/ä']);
  });
});
