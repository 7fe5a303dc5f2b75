import type { StixDescription } from '../kit/source.ts';
import { cardDescription } from '../common/stix/stix-kit.ts';

/** A card of a shop: BIN and masked PAN in the note only (no STIX observable fits a card). */
export const binCvvStix = (data: Record<string, unknown>): StixDescription => cardDescription(data);
