import { sql, type Expression, type Selectable, type SqlBool } from 'kysely';
import { likeContains } from '../../../../db/like.ts';
import type { Hit, MatchResult, MatchWindow, SourceContext } from '../../kit/source.ts';
import { maskedPan } from './card-number.ts';
import { cardDb, iin8Digests, type CardTable } from './card-store.ts';

/** Which stored cards a rule of either card source reports. */
export interface CardFilter {
  /** Issuer prefixes (6-8 digits); a card matches one of them, or the issuer name. */
  bins: string[];
  /** A case-insensitive part of the issuing bank's name. */
  issuer?: string;
  brands?: string[];
  cardTypes?: string[];
  cvvOnly?: boolean;
  /** Leave out cards whose expiry month ended before the window's end. */
  unexpiredOnly?: boolean;
  maxPriceCents?: number;
}

const two = (n: number) => String(n).padStart(2, '0');

/** A stored card as a hit: the BIN, the last four, never more of the number. */
function cardHit(row: Selectable<CardTable>): Hit {
  const expiry =
    row.exp_month === null || row.exp_year === null
      ? null
      : { month: two(Number(row.exp_month)), year: Number(row.exp_year) };
  return {
    key: `card:${row.id}`,
    date: Number(row.discovered_at),
    data: {
      bin: row.bin6,
      last4: row.last4,
      masked_pan: maskedPan(row.bin6, row.last4, Number(row.pan_length)),
      brand: row.brand,
      card_type: row.card_type,
      level: row.level,
      issuer: row.issuer,
      country: row.country,
      expiry: expiry && `${expiry.month}/${two(expiry.year % 100)}`,
      expires: expiry && `${expiry.year}-${expiry.month}`,
      has_cvv: Number(row.has_cvv) === 1,
      holder: row.holder,
      billing_state: row.billing_state,
      billing_country: row.billing_country,
      source_name: row.source_name,
      source_type: row.source_type,
      shop: row.shop,
      base: row.base,
      price: row.price_cents === null ? null : Number(row.price_cents) / 100,
      discovered_at: new Date(Number(row.discovered_at)).toISOString(),
      extra: row.extra === null ? null : (JSON.parse(row.extra) as Record<string, string>),
    },
  };
}

/** The cards of one rule learned of within the window (since, until], newest first. */
export async function matchCards(
  context: SourceContext,
  filter: CardFilter,
  window: MatchWindow,
  limit: number,
): Promise<MatchResult> {
  const until = new Date(window.until);
  const currentMonth = until.getUTCFullYear() * 12 + until.getUTCMonth() + 1;
  const matching = cardDb(context)
    .selectFrom('cards')
    .where((eb) => {
      const asset: Expression<SqlBool>[] = filter.bins.map((bin) =>
        bin.length === 6
          ? eb('bin6', '=', bin)
          : eb.and([
              eb('bin6', '=', bin.slice(0, 6)),
              eb('iin8_hash', 'in', [...iin8Digests(context.keys, bin).keys()]),
            ]),
      );
      if (filter.issuer) asset.push(likeContains(sql`lower(issuer)`, filter.issuer.toLowerCase()));
      const conditions: Expression<SqlBool>[] = [eb.or(asset), eb('discovered_at', '<=', window.until)];
      if (window.since !== null) conditions.push(eb('discovered_at', '>', window.since));
      if (filter.brands?.length) conditions.push(eb('brand', 'in', filter.brands));
      if (filter.cardTypes?.length) conditions.push(eb('card_type', 'in', filter.cardTypes));
      if (filter.cvvOnly) conditions.push(eb('has_cvv', '=', 1));
      // A card is good through the last day of its expiry month.
      if (filter.unexpiredOnly) conditions.push(sql<SqlBool>`exp_year * 12 + exp_month >= ${currentMonth}`);
      if (filter.maxPriceCents !== undefined) conditions.push(eb('price_cents', '<=', filter.maxPriceCents));
      return eb.and(conditions);
    });
  const rows = await matching.selectAll().orderBy('discovered_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  const { total } = await matching.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow();
  return { hits: rows.map(cardHit), total: Number(total) };
}
