import type { ArgError } from '../kit/args-validation.ts';
import { binsErrors, binsParam } from '../common/cards/card-args.ts';
import { binsIngester, cardIngester } from '../common/cards/card-ingest.ts';
import { matchCards } from '../common/cards/card-match.ts';
import { CARD_BRANDS, CARD_TYPES } from '../common/cards/card-number.ts';
import { cardStoreMigrations } from '../common/cards/card-store.ts';
import { loadDemoCards } from '../common/cards/demo-cards.ts';
import type { SourceDefinition } from '../kit/source.ts';

interface CreditCardArgs {
  bins?: string[];
  issuer?: string;
  brands?: string[];
  card_types?: string[];
}

// Shorter issuer parts ("ba") would match most banks of the table.
const MIN_ISSUER = 3;

function checkCreditCardArgs(args: Record<string, unknown>): ArgError[] {
  const { bins, issuer } = args as CreditCardArgs;
  const errors = binsErrors(args);
  if (issuer !== undefined && issuer.length < MIN_ISSUER) errors.push({ field: 'args.issuer', message: `must be at least ${MIN_ISSUER} characters`, rule: 3 });
  if (!bins?.length && issuer === undefined) errors.push({ field: 'args.bins', message: 'is required when args.issuer is not given', rule: 3 });
  return errors;
}

/**
 * Credit card (id 6): payment cards of the watched issuer, by BIN or by bank name, found in card
 * dumps and shop exports (the card store in ../cards). Hits carry the BIN and last four digits,
 * never the number or CVV; docs/sources.md lists the hit fields.
 */
export const creditCardSource: SourceDefinition = {
  id: 6,
  name: 'credit_card',
  alias: 'Credit cards',
  description: "Compromised payment cards of an issuer's BINs or bank name, found in card dumps and shop exports.",
  serviceType: 'sync',
  frequency: 'daily',
  params: [
    binsParam({ required: false, example: ['414720', '510560'] }),
    { name: 'issuer', type: 'String', required: false, hint: "Part of the issuing bank's name, any case (bins, issuer or both; a card matching either is reported)", example: 'chase' },
    { name: 'brands', type: 'Array[String]', required: false, hint: 'Only cards of these brands', example: ['visa'], valid_values: [...CARD_BRANDS] },
    { name: 'card_types', type: 'Array[String]', required: false, hint: 'Only cards of these types', example: ['credit', 'debit'], valid_values: [...CARD_TYPES] },
  ],
  excludableFields: ['masked_pan', 'bin', 'issuer', 'source_name'],
  filterableFields: ['bin', 'brand', 'card_type', 'level', 'issuer', 'country', 'has_cvv', 'source_type', 'source_name'],
  sortableFields: ['discovered_at', 'expires', 'bin', 'source_name'],
  hasData: true,
  checkArgs: checkCreditCardArgs,
  match(context, rawArgs, window, limit) {
    const args = rawArgs as CreditCardArgs;
    return matchCards(context, { bins: args.bins ?? [], issuer: args.issuer, brands: args.brands, cardTypes: args.card_types }, window, limit);
  },
  migrations: cardStoreMigrations,
  ingesters: [cardIngester('credit_card', 'payment cards from card dumps (PAN|MM|YY|CVV|…) and shop CSV exports, files, folders or - (stdin)'), binsIngester],
  async demo(context, now) {
    const added = await loadDemoCards(context, now, { sourceName: 'demo-dump.txt', seed: 6, bins: ['414720', '414709', '510560', '371241', '400022'], count: 60, listing: false });
    return `Demo cards: ${added} synthetic dump cards added (try credit_card with bins ["414720"] or issuer "chase")`;
  },
};
