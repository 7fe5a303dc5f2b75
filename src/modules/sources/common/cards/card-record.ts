import { CARD_BRANDS, normalizePan, type CardBrand, type CardType } from './card-number.ts';

/**
 * One card as a dump or shop listing gives it, reduced to what Dragnet may keep: the PAN only
 * until the store splits it into BIN, last four and a keyed hash; whether a CVV was present but
 * never the CVV; the holder's initials, never the name. Street address, city, zip, phone, email
 * and the like are personal data of the holder and not kept; columns Dragnet does not know are
 * kept as `extra` (never one that holds a card number).
 */
export interface CardRecord {
  pan: string;
  /** Null (with a warning) when the input gives no expiry or one that can be read two ways. */
  expMonth: number | null;
  expYear: number | null;
  hasCvv: boolean;
  holder: string | null;
  billingState: string | null;
  billingCountry: string | null;
  priceCents: number | null;
  base: string | null;
  shop: string | null;
  level: string | null;
  extra: Record<string, string> | null;
  /** What the input says about the card; the BIN table takes precedence over it. */
  claimed: { brand: CardBrand | null; cardType: CardType | null; issuer: string | null };
}

/** The raw text of the fields a parser found (absent when the input has no such field). */
export interface CardFields {
  pan: string;
  /** One field: MM/YY, MM/YYYY, MMYY, MM/DD/YY, YYYY-MM, … (parseExpiry); or `month` and `year` apart. */
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
  /** Columns of the input Dragnet has no field for, by their header. */
  extra?: Record<string, string>;
}

/** A card and the reasons some of its values were stored as null. */
export interface ReadCard {
  record: CardRecord;
  warnings: string[];
}

export interface Expiry {
  month: number;
  year: number;
}

export const NO_EXPIRY = 'no expiry';
export const AMBIGUOUS_EXPIRY = 'expiry is ambiguous (day-first or month-first)';
export const UNREADABLE_EXPIRY = 'expiry not understood';

const CVV = /^\d{3,4}$/;
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/** A month field: 1-12 (leading zero allowed) or an English month name. */
function monthOf(text: string): number | null {
  if (/^\d{1,2}$/.test(text)) return Number(text);
  const index = MONTHS.indexOf(text.slice(0, 3).toLowerCase());
  return index >= 0 && /^[a-z]+\.?$/i.test(text) ? index + 1 : null;
}

function expiryOf(month: number | null, yearText: string): Expiry | string {
  const year = yearText.length === 2 ? 2000 + Number(yearText) : Number(yearText);
  if (month === null || month < 1 || month > 12 || year < 2000 || year > 2099) return UNREADABLE_EXPIRY;
  return { month, year };
}

/** A month and a year in separate fields: a month 1-12 or its name, a 2 or 4 digit year. */
export function splitExpiry(month: string, year: string): Expiry | string {
  const m = month.trim();
  const y = year.trim();
  if (m === '' && y === '') return NO_EXPIRY;
  if (!/^(\d{2}|\d{4})$/.test(y)) return UNREADABLE_EXPIRY;
  return expiryOf(monthOf(m), y);
}

/** MM/DD/YY or DD/MM/YY: the month only when just one of the two can be it. */
function threePartExpiry(first: number, second: number, year: string): Expiry | string {
  if (first === second || (first <= 12 && second > 12)) return expiryOf(first, year);
  if (first > 12 && second <= 12) return expiryOf(second, year);
  return first <= 12 && second <= 12 ? AMBIGUOUS_EXPIRY : UNREADABLE_EXPIRY;
}

/**
 * An expiry in one field: MM/YY, MM/YYYY, MM-YY, MM.YY, MMYY, MMYYYY, YYYY-MM, YYYYMM, YYYY-MM-DD,
 * MM/DD/YY (or DD/MM/YY when only one reading is a date), `Dec 2027`. Anything it cannot read one
 * way only is the reason it is not stored.
 */
export function parseExpiry(field: string): Expiry | string {
  const text = field.trim();
  if (text === '') return NO_EXPIRY;
  let match = /^((?:19|20)\d{2})(?:\s*[/.-]\s*(\d{1,2})|(\d{2}))(?:[/.-]\d{1,2}(?:[T\s].*)?)?$/.exec(text);
  if (match) return expiryOf(Number(match[2] ?? match[3]), match[1]!);
  match = /^(\d{1,2})\s*[/.\s-]\s*(\d{2}|\d{4})$/.exec(text) ?? /^(\d{2})(\d{2}|\d{4})$/.exec(text);
  if (match) return expiryOf(Number(match[1]), match[2]!);
  match = /^(\d{1,2})[/.-](\d{1,2})[/.-](\d{2}|\d{4})$/.exec(text);
  if (match) return threePartExpiry(Number(match[1]), Number(match[2]), match[3]!);
  match = /^([a-z]{3,9}\.?)[\s/,-]*(\d{2}|\d{4})$/i.exec(text);
  return match ? expiryOf(monthOf(match[1]!), match[2]!) : UNREADABLE_EXPIRY;
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

const MAX_EXTRA = 20;
// A run of 12-19 digits, spaces or dashes between them allowed: a card number, maybe.
const DIGIT_RUN = /\d(?:[\s-]?\d){11,18}/g;

const holdsCardNumber = (value: string): boolean =>
  [...value.matchAll(DIGIT_RUN)].some(([run]) => !('reason' in normalizePan(run)));

/** The input's unknown columns, as far as they may be kept: a card number in one (a track, a second PAN) is not. */
function extraOf(fields: CardFields['extra'], warnings: string[]): Record<string, string> | null {
  const extra: Record<string, string> = {};
  let count = 0;
  for (const [key, raw] of Object.entries(fields ?? {})) {
    const value = text(raw);
    const name = text(key)?.slice(0, 64);
    if (value === null || !name || count === MAX_EXTRA) continue;
    if (holdsCardNumber(value)) warnings.push('extra field holding a card number not stored');
    else {
      extra[name] = value;
      count++;
    }
  }
  return count ? extra : null;
}

/** The record of a parser's fields, or the reason they are not a card (never quoting the number or CVV). */
export function cardRecord(fields: CardFields): ReadCard | string {
  const pan = normalizePan(fields.pan);
  if ('reason' in pan) return pan.reason;
  const warnings: string[] = [];
  const expiry =
    fields.expiry !== undefined || fields.month === undefined
      ? parseExpiry(fields.expiry ?? '')
      : splitExpiry(fields.month, fields.year ?? '');
  if (typeof expiry === 'string') warnings.push(expiry);
  const cvv = fields.cvv?.trim() ?? '';
  if (cvv !== '' && !CVV.test(cvv)) warnings.push('CVV not 3 or 4 digits');
  const record: CardRecord = {
    pan: pan.pan,
    expMonth: typeof expiry === 'string' ? null : expiry.month,
    expYear: typeof expiry === 'string' ? null : expiry.year,
    hasCvv: CVV.test(cvv),
    holder: fields.name ? holderInitials(fields.name) : null,
    billingState: text(fields.state),
    billingCountry: text(fields.country),
    priceCents: priceCents(fields.price),
    base: text(fields.base),
    shop: text(fields.shop),
    level: text(fields.level),
    extra: extraOf(fields.extra, warnings),
    claimed: { brand: brandOf(fields.brand), cardType: cardTypeOf(fields.type), issuer: text(fields.bank) },
  };
  return { record, warnings };
}
