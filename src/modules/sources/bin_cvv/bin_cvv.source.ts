import { Type } from '@sinclair/typebox';
import { binsArg, binsErrors } from '../common/cards/card-args.ts';
import { cardIngester } from '../common/cards/card-ingest.ts';
import { matchCards } from '../common/cards/card-match.ts';
import { CARD_BRANDS } from '../common/cards/card-number.ts';
import { cardStoreMigrations } from '../common/cards/card-store.ts';
import { loadDemoCards } from '../common/cards/demo-cards.ts';
import { oneOf } from '../kit/arg-params.ts';
import { defineSource, preparedOrErrors } from '../kit/source.ts';
import { newestRecord } from '../kit/newest-record.ts';
import { binCvvStix } from './bin-cvv-stix.ts';

/**
 * BIN-CVV (id 7): cards of the watched BINs offered with their CVV, the ones a fraudster can
 * use online: shop listings (with price, shop and base) and dumps with a CVV column. It reads
 * the card store in ../cards that the credit-card source shares; hits never carry the number or
 * the CVV itself.
 */
export const binCvvSource = defineSource({
  stix: binCvvStix,
  id: 7,
  name: 'bin_cvv',
  alias: 'BIN-CVV',
  description:
    'Cards of an issuer BIN offered with their CVV, from carding-shop listings and dumps, with price, shop and base when listed.',
  serviceType: 'sync',
  frequency: 'daily',
  args: Type.Object({
    bins: binsArg(['414720']),
    brand: Type.Optional(oneOf(CARD_BRANDS, { description: 'Only cards of this brand', examples: ['visa'] })),
    include_expired: Type.Optional(
      Type.Boolean({
        description: 'Also report cards whose expiry month has passed (off by default)',
        examples: [false],
      }),
    ),
    max_price: Type.Optional(
      Type.Number({
        description: 'Only listings at or below this price, in USD (cards without a price are then left out)',
        examples: [25.5],
      }),
    ),
  }),
  excludableFields: ['masked_pan', 'shop', 'base', 'source_name'],
  filterableFields: ['bin', 'brand', 'card_type', 'level', 'country', 'billing_state', 'shop', 'base', 'source_name'],
  sortableFields: ['discovered_at', 'price', 'expires', 'bin'],
  hasData: true,
  newestRecordAt: newestRecord('cards', 'discovered_at'),
  prepare(args) {
    const errors = binsErrors(args.bins);
    if (args.max_price !== undefined && args.max_price < 0)
      errors.push({ field: 'args.max_price', message: 'must not be negative', rule: 3 });
    return preparedOrErrors(errors, () => ({
      bins: args.bins,
      brands: args.brand === undefined ? undefined : [args.brand],
      cvvOnly: true,
      unexpiredOnly: !args.include_expired,
      maxPriceCents: args.max_price === undefined ? undefined : Math.round(args.max_price * 100),
    }));
  },
  match: matchCards,
  migrations: cardStoreMigrations,
  ingesters: [
    cardIngester(
      'bin_cvv',
      'the same card store as credit_card: shop CSV exports and card dumps, files, folders or - (stdin)',
    ),
  ],
  async demo(context, now) {
    const added = await loadDemoCards(context, now, {
      sourceName: 'demo-shop.csv',
      seed: 7,
      bins: ['414720', '510560', '414709'],
      count: 30,
      listing: true,
    });
    return `Demo cards: ${added} synthetic shop listings with CVV added (try bin_cvv with bins ["414720"])`;
  },
});
