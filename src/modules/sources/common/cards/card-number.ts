/**
 * Card numbers (PANs): validation, the card scheme of a number's first digits, and the only
 * parts of a PAN Dragnet keeps (PCI DSS 3.4: the first six and the last four).
 */

/** Card brands (schemes) the card sources know. */
export const CARD_BRANDS = [
  'visa',
  'mastercard',
  'amex',
  'discover',
  'jcb',
  'unionpay',
  'diners',
  'maestro',
  'mir',
  'verve',
] as const;
export type CardBrand = (typeof CARD_BRANDS)[number];

export const CARD_TYPES = ['credit', 'debit', 'prepaid'] as const;
export type CardType = (typeof CARD_TYPES)[number];

/** ISO/IEC 7812 allows 8 to 19 digits; payment cards in dumps have 12 to 19. */
const PAN = /^\d{12,19}$/;

export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let digit = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

/** The check digit that makes `partial` + digit pass the Luhn check. */
export function luhnCheckDigit(partial: string): string {
  for (let digit = 0; digit <= 9; digit++) if (luhnValid(partial + digit)) return String(digit);
  throw new Error('unreachable: one of ten digits always completes a Luhn sum');
}

/**
 * The PAN of a card-number field (spaces and dashes between digit groups allowed), or the reason
 * it is not one. Reasons never quote the number.
 */
export function normalizePan(field: string): { pan: string } | { reason: string } {
  const pan = field.replace(/[\s-]/g, '');
  if (!PAN.test(pan)) return { reason: 'card number must be 12 to 19 digits' };
  if (!luhnValid(pan)) return { reason: 'card number fails the Luhn check' };
  return { pan };
}

// [first, last, scheme]: the numbers whose first digits (as many as `first` has) lie in the range.
// A scheme's narrower range inside another's broader one (Verve's 506099-506198 inside Maestro's
// 50) wins because longer ranges are tried first, whatever their order here.
const SCHEME_RANGES: [number, number, CardBrand][] = [
  [2200, 2204, 'mir'],
  [2221, 2720, 'mastercard'],
  [300, 305, 'diners'],
  [34, 34, 'amex'],
  [37, 37, 'amex'],
  [3528, 3589, 'jcb'],
  [36, 36, 'diners'],
  [38, 39, 'diners'],
  [4, 4, 'visa'],
  [50, 50, 'maestro'],
  [51, 55, 'mastercard'],
  [56, 58, 'maestro'],
  [6011, 6011, 'discover'],
  [644, 649, 'discover'],
  [65, 65, 'discover'],
  [62, 62, 'unionpay'],
  [63, 63, 'maestro'],
  [67, 67, 'maestro'],
  // Verve (Interswitch, Nigeria): cards of 16 to 19 digits.
  [506099, 506198, 'verve'],
  [507865, 507964, 'verve'],
  [650002, 650027, 'verve'],
];

const LONGEST_FIRST = SCHEME_RANGES.map(([first, last, scheme]) => ({
  length: String(first).length,
  first,
  last,
  scheme,
})).sort((a, b) => b.length - a.length);

/** The scheme a number's leading digits belong to (the IIN ranges the schemes publish; the longest matching range), if any. */
export function schemeOf(digits: string): CardBrand | null {
  for (const { length, first, last, scheme } of LONGEST_FIRST) {
    if (digits.length < length) continue;
    const prefix = Number(digits.slice(0, length));
    if (prefix >= first && prefix <= last) return scheme;
  }
  return null;
}

/**
 * The parts of a PAN: the BIN and last four, which are stored, and the 8-digit issuer prefix of
 * PANs of 16 or more digits (null for shorter ones), which is stored only as a keyed digest.
 */
export function panParts(pan: string): { iin8: string | null; bin: string; last4: string; length: number } {
  return {
    iin8: pan.length >= 16 ? pan.slice(0, 8) : null,
    bin: pan.slice(0, 6),
    last4: pan.slice(-4),
    length: pan.length,
  };
}

/** What a card's stored `iin8_hash` is the card digest of. */
export const iin8DigestInput = (iin8: string): string => `iin8:${iin8}`;

/** 414720******1234: the BIN, the hidden middle, the last four. */
export const maskedPan = (bin: string, last4: string, length: number): string =>
  `${bin}${'*'.repeat(Math.max(length - bin.length - 4, 0))}${last4}`;
