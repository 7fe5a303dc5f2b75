import { describe, expect, it } from 'vitest';
import {
  cefHeader,
  cefMessage,
  cefValue,
  hecBodies,
  octetCounted,
  syslogMessage,
  type SiemEvent,
} from './siem-events.ts';

const event: SiemEvent = {
  org: { id: 3, name: 'Acme' },
  rule: { id: 7, name: 'Bank | watch \\ é' },
  incident: { id: 11, link: 'https://dragnet.test/incidents/11?org=3' },
  source: { id: 1, alias: 'messenger' },
  tlp: 'amber',
  hit: { key: 'm:1', date: new Date('2026-03-10T10:00:00.250Z'), fields: { text: 'a=b\nc' } },
};

describe('SIEM event formats', () => {
  it('escapes CEF header fields (backslash, pipe; no line break) and extension values (backslash, equals, line breaks)', () => {
    expect(cefHeader('a|b\\c\nd')).toBe('a\\|b\\\\c d');
    expect(cefValue('a=b\\c\r\nd\re|f')).toBe('a\\=b\\\\c\\nd\\re|f');
    const line = cefMessage(event);
    expect(line).toMatch(
      /^CEF:0\|Dragnet\|Dragnet\|[^|]+\|hit:messenger\|New messenger hit for rule Bank \\\| watch \\\\ é\|5\|rt=1773136800250 /,
    );
    expect(line).not.toMatch(/[\r\n]/);
    expect(line).toContain('cs6={"text":"a\\=b\\\\nc"}');
  });

  it('writes RFC 5424 with PRI from facility and severity 4, and counts octets, not characters', () => {
    const message = syslogMessage(
      event,
      { format: 'json', appName: 'drag net', facility: 13, host: 'host 1' },
      new Date(0),
    );
    expect(message).toMatch(/^<108>1 1970-01-01T00:00:00\.000Z host1 dragnet \d+ hit - \{/);
    const framed = octetCounted(message);
    const [length] = framed.split(' ');
    expect(Number(length)).toBe(Buffer.byteLength(message));
    expect(Number(length)).toBeGreaterThan(message.length); // é is two bytes
  });

  it('batches HEC events: at most 500 per body, every event once, in order', () => {
    const events = Array.from({ length: 1201 }, (_, i) => ({ event: { i } }));
    const bodies = hecBodies(events);
    expect(bodies).toHaveLength(3);
    const back = bodies.flatMap((body) =>
      body
        .toString()
        .split('\n')
        .map((line) => JSON.parse(line) as { event: { i: number } }),
    );
    expect(back.map((e) => e.event.i)).toEqual(events.map((_, i) => i));
  });
});
