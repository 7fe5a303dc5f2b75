import { Type, type Static } from '@sinclair/typebox';
import { binsArg, binsErrors } from '../common/cards/card-args.ts';
import { binsIngester, cardIngester } from '../common/cards/card-ingest.ts';
import { matchCards } from '../common/cards/card-match.ts';
import { CARD_BRANDS, CARD_TYPES } from '../common/cards/card-number.ts';
import { cardStoreMigrations } from '../common/cards/card-store.ts';
import { loadDemoCards } from '../common/cards/demo-cards.ts';
import { oneOf } from '../kit/arg-params.ts';
import { defineSource, preparedOrErrors, type Prepared } from '../kit/source.ts';
import type { CardFilter } from '../common/cards/card-match.ts';
import { newestRecord } from '../kit/newest-record.ts';
import { creditCardStix } from './credit-card-stix.ts';

const creditCardArgs = Type.Object({
  bins: Type.Optional(binsArg(['414720', '510560'])),
  issuer: Type.Optional(
    Type.String({
      description:
        "Part of the issuing bank's name, any case (bins, issuer or both; a card matching either is reported)",
      examples: ['chase'],
    }),
  ),
  brands: Type.Optional(
    Type.Array(oneOf(CARD_BRANDS), { description: 'Only cards of these brands', examples: [['visa']] }),
  ),
  card_types: Type.Optional(
    Type.Array(oneOf(CARD_TYPES), { description: 'Only cards of these types', examples: [['credit', 'debit']] }),
  ),
});

// Shorter issuer parts ("ba") would match most banks of the table.
const MIN_ISSUER = 3;

function prepareCardFilter(args: Static<typeof creditCardArgs>): Prepared<CardFilter> {
  const { bins, issuer } = args;
  const errors = binsErrors(bins);
  if (issuer !== undefined && issuer.length < MIN_ISSUER)
    errors.push({ field: 'args.issuer', message: `must be at least ${MIN_ISSUER} characters`, rule: 3 });
  if (!bins?.length && issuer === undefined)
    errors.push({ field: 'args.bins', message: 'is required when args.issuer is not given', rule: 3 });
  return preparedOrErrors(errors, () => ({
    bins: bins ?? [],
    issuer,
    brands: args.brands,
    cardTypes: args.card_types,
  }));
}

/**
 * Credit card (id 6): payment cards of the watched issuer, by BIN or by bank name, found in card
 * dumps and shop exports (the card store in ../cards). Hits carry the BIN and last four digits,
 * never the number or CVV; docs/sources.md lists the hit fields.
 */
export const creditCardSource = defineSource({
  stix: creditCardStix,
  id: 6,
  name: 'credit_card',
  alias: 'Credit cards',
  description: "Compromised payment cards of an issuer's BINs or bank name, found in card dumps and shop exports.",
  serviceType: 'sync',
  frequency: 'daily',
  args: creditCardArgs,
  excludableFields: ['masked_pan', 'bin', 'issuer', 'source_name'],
  filterableFields: [
    'bin',
    'brand',
    'card_type',
    'level',
    'issuer',
    'country',
    'has_cvv',
    'source_type',
    'source_name',
  ],
  sortableFields: ['discovered_at', 'expires', 'bin', 'source_name'],
  hasData: true,
  newestRecordAt: newestRecord('cards', 'discovered_at'),
  prepare: prepareCardFilter,
  match: matchCards,
  migrations: cardStoreMigrations,
  ingesters: [
    cardIngester(
      'credit_card',
      'payment cards from card dumps (PAN|MM|YY|CVV|…) and shop CSV exports, files, folders or - (stdin)',
    ),
    binsIngester,
  ],
  async demo(context, now) {
    const added = await loadDemoCards(context, now, {
      sourceName: 'demo-dump.txt',
      seed: 6,
      bins: ['414720', '414709', '510560', '371241', '400022'],
      count: 60,
      listing: false,
    });
    return `Demo cards: ${added} synthetic dump cards added (try credit_card with bins ["414720"] or issuer "chase")`;
  },
});
