import { DAY_MS, HOUR_MS } from '../../../../lib/clock.ts';
import { seededRandom } from '../seeded-random.ts';
import type { SourceContext } from '../../kit/source.ts';
import { createDocumentWriter, type DocumentInput } from './document-store.ts';

/**
 * What the document sources' demos share: a seeded random source (same demo on every machine),
 * and a demo record's dates. Day 0 is the 24 hours before `now`: a record of day d was posted
 * within day d + 1 before now and learned of an hour before the end of day d, so every demo
 * record is dated before `now` and found by a rule's first run.
 */
export function demoRandom(seed: number) {
  const random = seededRandom(seed);
  return {
    random,
    pick: <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)]!,
    int: (below: number) => Math.floor(random() * below),
  };
}

/** When a demo record of `day` was posted (epoch ms): some hours before it was learned of. */
export const demoPostedAt = (now: number, day: number, random: () => number): number =>
  now - (day + 1) * DAY_MS + Math.floor(random() * 20 * HOUR_MS);

/** Stores demo documents as learned of on their day; returns how many were new (a second load adds none). */
export async function writeDemoDocuments(
  context: SourceContext,
  source: string,
  now: number,
  documents: { day: number; document: DocumentInput }[],
): Promise<number> {
  const writer = createDocumentWriter(context, source);
  const days = [...new Set(documents.map((entry) => entry.day))].sort((a, b) => b - a);
  let added = 0;
  for (const day of days) {
    const ofDay = documents.filter((entry) => entry.day === day).map((entry) => entry.document);
    added += (await writer.write(ofDay, now - day * DAY_MS - HOUR_MS)).added;
  }
  return added;
}
