import { CARD_BRANDS, normalizePan, type CardBrand, type CardType } from './card-number.ts';

/**
 * One card as a dump or shop listing gives it, reduced to what Dragnet may keep: the PAN only
 * until the store splits it into BIN, last four and a keyed hash; whether a CVV was present but
 * never the CVV; the holder's initials, never the name. Street address, city, zip, phone and
 * email are not read at all.
 */
export interface CardRecord {
  pan: string;
  expMonth: number;
  expYear: number;
  hasCvv: boolean;
  holder: string | null;
  billingState: string | null;
  billingCountry: string | null;
  priceCents: number | null;
  base: string | null;
  shop: string | null;
  level: string | null;
  /** What the input says about the card; the BIN table takes precedence over it. */
  claimed: { brand: CardBrand | null; cardType: CardType | null; issuer: string | null };
}

/** The raw text of the fields a parser found (absent when the input has no such field). */
export interface CardFields {
  pan: string;
  /** MM/YY, MM/YYYY, MM-YY, MMYY or YYYY-MM; or `month` and `year` apart. */
  expiry?: string;
  month?: string;
  year?: string;
  cvv?: string;
  name?: string;
  state?: string;
  country?: string;
  price?: string;
  base?: string;
  shop?: string;
  level?: string;
  type?: string;
  bank?: string;
  brand?: string;
}

interface Expiry {
  month: number;
  year: number;
}

const CVV = /^\d{3,4}$/;

function expiryOf(month: number, yearText: string): Expiry | null {
  const year = yearText.length === 2 ? 2000 + Number(yearText) : Number(yearText);
  if (month < 1 || month > 12 || year < 2000 || year > 2099) return null;
  return { month, year };
}

/** A month and a year in separate fields: 1-2 digit month, 2 or 4 digit year. */
export function splitExpiry(month: string, year: string): Expiry | null {
  const m = month.trim();
  const y = year.trim();
  if (!/^\d{1,2}$/.test(m) || !/^(\d{2}|\d{4})$/.test(y)) return null;
  return expiryOf(Number(m), y);
}

/** An expiry in one field: MM/YY, MM/YYYY, MM-YY, MM.YY, MMYY or YYYY-MM. */
export function combinedExpiry(field: string): Expiry | null {
  const text = field.trim();
  const monthFirst = /^(\d{1,2})\s*[/.-]\s*(\d{2}|\d{4})$/.exec(text) ?? /^(\d{2})(\d{2})$/.exec(text);
  if (monthFirst) return expiryOf(Number(monthFirst[1]), monthFirst[2]!);
  const yearFirst = /^(\d{4})-(\d{1,2})$/.exec(text);
  return yearFirst ? expiryOf(Number(yearFirst[2]), yearFirst[1]!) : null;
}

/** "John A. Smith" -> "J. A. S.": enough to tell cards apart, too little to name anyone. */
export function holderInitials(name: string): string | null {
  const initials = name
    .split(/\s+/)
    .map((word) => /\p{L}/u.exec(word)?.[0])
    .filter((letter): letter is string => letter !== undefined)
    .slice(0, 3);
  return initials.length ? initials.map((letter) => `${letter.toUpperCase()}.`).join(' ') : null;
}

const MAX_TEXT = 100;

function text(field: string | undefined): string | null {
  const value = field?.replace(/\s+/g, ' ').trim();
  return value ? value.slice(0, MAX_TEXT) : null;
}

/** "$12.50", "12,5", "12 USD" -> 1250; anything else is no price. */
export function priceCents(field: string | undefined): number | null {
  const match = /^\$?\s*(\d{1,7})(?:[.,](\d{1,2}))?\s*(?:\$|usd)?$/i.exec(field?.trim() ?? '');
  if (!match) return null;
  return Number(match[1]) * 100 + Number((match[2] ?? '0').padEnd(2, '0'));
}

// A Map: brands come from ingested files, and "constructor" must not find Object's.
const BRAND_ALIASES = new Map<string, CardBrand>([
  ['mc', 'mastercard'],
  ['master', 'mastercard'],
  ['americanexpress', 'amex'],
  ['visaelectron', 'visa'],
  ['chinaunionpay', 'unionpay'],
  ['cup', 'unionpay'],
  ['dinersclub', 'diners'],
  ['dinersclubinternational', 'diners'],
]);

export function brandOf(field: string | undefined): CardBrand | null {
  const key = (field ?? '').toLowerCase().replace(/[^a-z]/g, '');
  return (CARD_BRANDS as readonly string[]).includes(key) ? (key as CardBrand) : (BRAND_ALIASES.get(key) ?? null);
}

export function cardTypeOf(field: string | undefined): CardType | null {
  const value = (field ?? '').toLowerCase();
  if (value.includes('prepaid')) return 'prepaid';
  if (value.includes('debit')) return 'debit';
  if (value.includes('credit') || value.includes('charge')) return 'credit';
  return null;
}

/** The record of a parser's fields, or the reason they are not a card (never quoting the number or CVV). */
export function cardRecord(fields: CardFields): CardRecord | string {
  const pan = normalizePan(fields.pan);
  if ('reason' in pan) return pan.reason;
  const expiry = fields.expiry !== undefined ? combinedExpiry(fields.expiry) : splitExpiry(fields.month ?? '', fields.year ?? '');
  if (!expiry) return 'expiry must be a month 1-12 and a year (YY or YYYY)';
  const cvv = fields.cvv?.trim() ?? '';
  if (cvv !== '' && !CVV.test(cvv)) return 'CVV must be 3 or 4 digits';
  return {
    pan: pan.pan,
    expMonth: expiry.month,
    expYear: expiry.year,
    hasCvv: cvv !== '',
    holder: fields.name ? holderInitials(fields.name) : null,
    billingState: text(fields.state),
    billingCountry: text(fields.country),
    priceCents: priceCents(fields.price),
    base: text(fields.base),
    shop: text(fields.shop),
    level: text(fields.level),
    claimed: { brand: brandOf(fields.brand), cardType: cardTypeOf(fields.type), issuer: text(fields.bank) },
  };
}
