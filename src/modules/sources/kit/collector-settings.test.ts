import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { checkCollectorSettings, CollectorSettingsError, HTTP_URL_FORMAT } from './collector-settings.ts';

/** What the collectors' own tests do not reach: nested paths, a missing key, reasons said from the schema. */
const schema = Type.Object({
  feeds: Type.Array(
    Type.Object(
      { url: Type.String({ format: HTTP_URL_FORMAT }), weight: Type.Integer({ minimum: 0, default: 1 }) },
      { additionalProperties: false },
    ),
  ),
  mode: Type.Union([Type.Literal('fast'), Type.Literal('slow')], { default: 'slow' }),
  label: Type.Optional(Type.String({ minLength: 1 })),
});

const refusal = (raw: Record<string, unknown>) => {
  try {
    checkCollectorSettings('test-feed', schema, raw);
  } catch (error) {
    if (error instanceof CollectorSettingsError) return error.message;
    throw error;
  }
  throw new Error('accepted');
};

describe('collector settings', () => {
  it('apply defaults, nested ones too, and leave an optional setting out', () => {
    expect(checkCollectorSettings('test-feed', schema, { feeds: [{ url: 'https://a.test/' }] })).toEqual({
      feeds: [{ url: 'https://a.test/', weight: 1 }],
      mode: 'slow',
    });
  });

  it('name the key that is wrong as the file has it, with the reason said from the schema', () => {
    expect(refusal({})).toBe('feeds: is required');
    expect(refusal({ feeds: [{ url: 'https://a.test/' }], colour: 'red' })).toBe(
      'colour: is not a setting of test-feed (feeds, mode, label)',
    );
    expect(refusal({ feeds: [{ url: 'https://a.test/' }, { url: 'ftp://b.test/' }] })).toBe(
      'feeds[1].url: must be an http(s) URL',
    );
    expect(refusal({ feeds: [{ url: 'https://a.test/', wieght: 2 }] })).toBe(
      'feeds[0].wieght: is not a setting (url, weight)',
    );
    expect(refusal({ feeds: [{ url: 'https://a.test/', weight: -1 }] })).toBe(
      'feeds[0].weight: must be an integer >= 0',
    );
    expect(refusal({ feeds: [], mode: 'quick' })).toBe('mode: must be "fast" or "slow"');
    expect(refusal({ feeds: [], label: '' })).toBe('label: must be a non-empty string');
  });
});
