import { sourceWithoutData } from '../source.ts';

/** Card brands shared by the card sources. */
export const CARD_BRANDS = ['visa', 'mastercard', 'amex', 'discover', 'jcb', 'unionpay', 'diners', 'maestro', 'mir'];

/**
 * Credit card (id 6): compromised payment cards of an issuer (by BIN) found in leaks, pastes,
 * forum posts and skimmer logs. Card numbers are never stored in clear: hits carry the BIN and
 * the last four digits.
 *
 * Hit data: bin, last4, masked_pan, brand, card_type, level, issuer, country, expiry,
 * source_type, source_name, discovered_at.
 */
export const creditCardSource = sourceWithoutData({
  id: 6,
  name: 'credit_card',
  alias: 'Credit cards',
  description: 'Compromised payment cards of an issuer BIN found in leaks, pastes, forums and skimmer logs.',
  serviceType: 'sync',
  frequency: 'daily',
  params: [
    { name: 'bin', type: 'String', required: true, hint: 'Issuer identification number: the first 6 or 8 digits of the card number', example: '41472012' },
    { name: 'brands', type: 'Array[String]', required: false, hint: 'Only cards of these brands', example: ['visa'], valid_values: CARD_BRANDS },
    { name: 'card_types', type: 'Array[String]', required: false, hint: 'Only cards of these types', example: ['credit', 'debit'], valid_values: ['credit', 'debit', 'prepaid'] },
  ],
  excludableFields: ['masked_pan', 'source_name'],
  filterableFields: ['bin', 'brand', 'card_type', 'level', 'country', 'source_type', 'source_name'],
  sortableFields: ['discovered_at', 'bin', 'expiry'],
});
