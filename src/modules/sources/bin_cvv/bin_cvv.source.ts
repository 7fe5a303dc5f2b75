import type { ArgError } from '../kit/args-validation.ts';
import { binsErrors, binsParam } from '../common/cards/card-args.ts';
import { cardIngester } from '../common/cards/card-ingest.ts';
import { matchCards } from '../common/cards/card-match.ts';
import { CARD_BRANDS } from '../common/cards/card-number.ts';
import { cardStoreMigrations } from '../common/cards/card-store.ts';
import { loadDemoCards } from '../common/cards/demo-cards.ts';
import type { SourceDefinition } from '../kit/source.ts';

interface BinCvvArgs {
  bins: string[];
  brand?: string;
  include_expired?: boolean;
  max_price?: number;
}

function checkBinCvvArgs(args: Record<string, unknown>): ArgError[] {
  const errors = binsErrors(args);
  const { max_price: maxPrice } = args as unknown as BinCvvArgs;
  if (maxPrice !== undefined && maxPrice < 0) errors.push({ field: 'args.max_price', message: 'must not be negative', rule: 3 });
  return errors;
}

/**
 * BIN-CVV (id 7): cards of the watched BINs offered with their CVV, the ones a fraudster can
 * use online: shop listings (with price, shop and base) and dumps with a CVV column. It reads
 * the card store in ../cards that the credit-card source shares; hits never carry the number or
 * the CVV itself.
 */
export const binCvvSource: SourceDefinition = {
  id: 7,
  name: 'bin_cvv',
  alias: 'BIN-CVV',
  description: 'Cards of an issuer BIN offered with their CVV, from carding-shop listings and dumps, with price, shop and base when listed.',
  serviceType: 'sync',
  frequency: 'daily',
  params: [
    binsParam({ required: true, example: ['414720'] }),
    { name: 'brand', type: 'String', required: false, hint: 'Only cards of this brand', example: 'visa', valid_values: [...CARD_BRANDS] },
    { name: 'include_expired', type: 'Boolean', required: false, hint: 'Also report cards whose expiry month has passed (off by default)', example: false },
    { name: 'max_price', type: 'Float', required: false, hint: 'Only listings at or below this price, in USD (cards without a price are then left out)', example: 25.5 },
  ],
  excludableFields: ['masked_pan', 'shop', 'base', 'source_name'],
  filterableFields: ['bin', 'brand', 'card_type', 'level', 'country', 'billing_state', 'shop', 'base', 'source_name'],
  sortableFields: ['discovered_at', 'price', 'expires', 'bin'],
  hasData: true,
  checkArgs: checkBinCvvArgs,
  match(context, rawArgs, window, limit) {
    const args = rawArgs as unknown as BinCvvArgs;
    return matchCards(
      context,
      {
        bins: args.bins,
        brands: args.brand === undefined ? undefined : [args.brand],
        cvvOnly: true,
        unexpiredOnly: !args.include_expired,
        maxPriceCents: args.max_price === undefined ? undefined : Math.round(args.max_price * 100),
      },
      window,
      limit,
    );
  },
  migrations: cardStoreMigrations,
  ingesters: [cardIngester('bin_cvv', 'the same card store as credit_card: shop CSV exports and card dumps, files, folders or - (stdin)')],
  async demo(context, now) {
    const added = await loadDemoCards(context, now, { sourceName: 'demo-shop.csv', seed: 7, bins: ['414720', '510560', '414709'], count: 30, listing: true });
    return `Demo cards: ${added} synthetic shop listings with CVV added (try bin_cvv with bins ["414720"])`;
  },
};
