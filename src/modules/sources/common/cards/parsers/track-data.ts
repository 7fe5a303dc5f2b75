import type { Readable } from 'node:stream';
import { readLines } from '../../ingest/ingest-kit.ts';
import { cardRecord, type CardFields, type ReadCard } from '../card-record.ts';
import { parsedCard, type ParsedCard } from './pipe-dump.ts';

/**
 * Magnetic-stripe track data (ISO/IEC 7813), the classic "dump":
 *   track 1  %B<PAN>^<SURNAME/GIVEN NAMES>^<YYMM><service code><discretionary data>?
 *   track 2  ;<PAN>=<YYMM><service code><discretionary data>?
 * Sentinels (% ; ?) are often left out, names run past the standard's 26 characters, and EMV
 * chip dumps write track 2 with `D` for `=`.
 * Only the PAN (for the store to split), the holder's initials and the expiry are read; the
 * discretionary data (PIN verification value, CVV1) and the raw track are never kept.
 */
const TRACK1 = /%?B(\d{12,19})\^([^^\n]{1,40})\^(\d{2})(\d{2})(\d{3})?/g;
const TRACK2 = /(?<![\d=])(\d{12,19})[=D](\d{2})(\d{2})(\d{3})?/g;

/** Whether `text` holds track 1 or track 2 data. */
export const hasTrackData = (text: string): boolean =>
  new RegExp(TRACK1.source).test(text) || new RegExp(TRACK2.source).test(text);

interface Track {
  pan: string;
  name?: string;
  yy: string;
  mm: string;
  serviceCode?: string;
  track: '1' | '2';
}

/** "DOE/JOHN A" -> "JOHN A DOE": track 1 writes the surname first. */
const givenNamesFirst = (name: string): string => {
  const [surname, given] = name.split('/', 2);
  return given === undefined ? name : `${given} ${surname}`;
};

function tracksOf(text: string): Track[] {
  const tracks: Track[] = [];
  for (const m of text.matchAll(TRACK1))
    tracks.push({
      pan: m[1]!,
      name: givenNamesFirst(m[2]!).trim(),
      yy: m[3]!,
      mm: m[4]!,
      serviceCode: m[5],
      track: '1',
    });
  for (const m of text.matchAll(TRACK2))
    tracks.push({ pan: m[1]!, yy: m[2]!, mm: m[3]!, serviceCode: m[4], track: '2' });
  return tracks;
}

/**
 * The cards of the track data in `text` (a line, a CSV cell): tracks 1 and 2 of one card make
 * one card. Returns the reasons when no track holds a card, and [] when there is no track data.
 */
export function trackCards(text: string): (ReadCard | string)[] {
  const byPan = new Map<string, Track[]>();
  for (const track of tracksOf(text)) byPan.set(track.pan, [...(byPan.get(track.pan) ?? []), track]);
  return [...byPan.values()].map((tracks) => {
    const first = tracks[0]!;
    const fields: CardFields = {
      pan: first.pan,
      name: tracks.find((track) => track.name)?.name,
      // Track data writes YYMM; as MM/YY it goes through the one expiry reader.
      expiry: `${first.mm}/${first.yy}`,
      extra: {
        tracks: tracks.map((track) => track.track).join('+'),
        ...(first.serviceCode ? { service_code: first.serviceCode } : {}),
      },
    };
    return cardRecord(fields);
  });
}

const NO_TRACK = 'no track 1 or track 2 data';

/** A dump of track data, a card per track (pair) wherever it stands in a line: alone, in columns, after a label. */
export async function* readTrackDump(stream: Readable): AsyncGenerator<ParsedCard> {
  for await (const { line, number } of readLines(stream)) {
    const text = line.trim();
    if (text === '' || text.startsWith('#')) continue;
    const cards = trackCards(text);
    if (cards.length === 0) yield { line: number, record: NO_TRACK };
    for (const card of cards) yield parsedCard(number, card);
  }
}
