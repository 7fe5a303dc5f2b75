import { CARD_BRANDS } from '../credit_card/credit_card.source.ts';
import { sourceWithoutData } from '../source.ts';

/**
 * BIN-CVV (id 7): "CVV" listings (card number, expiry, CVV and billing details) offered on
 * carding shops, watched by BIN. Hits carry the listing, never the card number in clear.
 *
 * Hit data: bin, last4, brand, card_type, level, issuer, country, state, city, zip, expiry,
 * shop, base (the shop's batch name), price (USD), listed_at.
 */
export const binCvvSource = sourceWithoutData({
  id: 7,
  name: 'bin_cvv',
  alias: 'BIN-CVV',
  description: 'Carding-shop listings of cards with CVV for an issuer BIN, with price, shop and billing location.',
  serviceType: 'sync',
  frequency: 'daily',
  params: [
    { name: 'bin', type: 'String', required: true, hint: 'Issuer identification number: the first 6 or 8 digits of the card number', example: '414720' },
    { name: 'brand', type: 'String', required: false, hint: 'Only listings of this brand', example: 'visa', valid_values: CARD_BRANDS },
    { name: 'include_expired', type: 'Boolean', required: false, hint: 'Also report listings whose card has expired (off by default)', example: false },
    { name: 'max_price', type: 'Float', required: false, hint: 'Only listings at or below this price, in USD', example: 25.5 },
  ],
  excludableFields: ['shop', 'base', 'zip'],
  filterableFields: ['bin', 'brand', 'card_type', 'level', 'country', 'state', 'shop', 'base'],
  sortableFields: ['listed_at', 'price', 'expiry', 'bin'],
});
