import { sql, type Expression, type Selectable, type SqlBool } from 'kysely';
import { likeContains } from '../../../db/like.ts';
import { parseDomainName } from '../common/domains/domain-name.ts';
import type { Hit, MatchResult, MatchWindow, SourceContext } from '../kit/source.ts';
import { certificateDb, type CertificateTable } from './certificate-store.ts';
import { isoDateOrNull as iso } from '../../../lib/iso-date.ts';

/** How a certificate name relates to the watched domain. */
export type MatchType = 'exact' | 'subdomain' | 'lookalike';

/** A watched domain, ready to test names against. */
export interface NameTarget {
  /** The watched name, lower case ASCII: `acme-bank.com` or `shop.acme-bank.com`. */
  domain: string;
  /** Its registrable domain: names under it are the owner's own, never lookalikes. */
  registrable: string;
  /** The brand label and its forms a lookalike contains (`acme-bank`, `acmebank`); empty when too short. */
  brands: string[];
  includeSubdomains: boolean;
}

// A shorter brand label ("ab", "ibm") occurs inside too many unrelated names to call them lookalikes.
export const MIN_BRAND_LENGTH = 4;

/** The target of a `domain` arg, or why it is no domain. */
export function nameTarget(domain: string, includeSubdomains: boolean): NameTarget | string {
  const parsed = parseDomainName(domain);
  if (typeof parsed === 'string') return parsed;
  const brands =
    parsed.label.length < MIN_BRAND_LENGTH ? [] : [...new Set([parsed.label, parsed.label.replaceAll('-', '')])];
  return { domain: parsed.domain, registrable: parsed.registrable, brands, includeSubdomains };
}

const RANK: Record<MatchType, number> = { exact: 3, subdomain: 2, lookalike: 1 };

/**
 * How a certificate's names match the target: each name (wildcard `*.` stripped) is exact (the
 * watched name), a subdomain (under it, when subdomains are included), or a lookalike (it
 * contains the brand label but is not under the owner's registrable domain:
 * acme-bank-login.com, acme-bank.com.evil.net, acmebank.net). The certificate's match type is
 * the strongest of its names; null when no name matches.
 */
export function matchNames(
  names: string[],
  target: NameTarget,
): { matchType: MatchType; matchedNames: string[] } | null {
  let best: MatchType | null = null;
  const matchedNames: string[] = [];
  for (const raw of names) {
    const name = raw.startsWith('*.') ? raw.slice(2) : raw;
    let type: MatchType | null = null;
    if (name === target.domain) type = 'exact';
    else if (name.endsWith(`.${target.domain}`)) type = target.includeSubdomains ? 'subdomain' : null;
    else if (target.brands.some((brand) => name.includes(brand)) && !ownedBy(name, target.registrable))
      type = 'lookalike';
    if (!type) continue;
    matchedNames.push(raw);
    if (!best || RANK[type] > RANK[best]) best = type;
  }
  return best && { matchType: best, matchedNames };
}

const ownedBy = (name: string, registrable: string) => name === registrable || name.endsWith(`.${registrable}`);

/** What a rule asks of the certificate store. */
export interface CertificateFilter {
  target: NameTarget;
  /** Parts of issuer names (O or CN, any case) whose certificates are not reported. */
  ignoreIssuers: string[];
  includePrecertificates: boolean;
}

function certificateHit(
  row: Selectable<CertificateTable>,
  match: { matchType: MatchType; matchedNames: string[] },
): Hit {
  return {
    key: `certificate:${row.id}`,
    date: Number(row.discovered_at),
    data: {
      common_name: row.common_name,
      all_domains: row.domains ? row.domains.split(' ') : [],
      matched_names: match.matchedNames,
      match_type: match.matchType,
      issuer: row.issuer_org ?? row.issuer_cn,
      issuer_cn: row.issuer_cn,
      subject_org: row.subject_org,
      not_before: iso(row.not_before),
      not_after: iso(row.not_after),
      fingerprint: row.sha256,
      sha1_fingerprint: row.sha1,
      serial_number: row.serial_number,
      update_type: row.entry_type === 'precert' ? 'PrecertLogEntry' : 'X509LogEntry',
      log_name: row.log_name,
      log_url: row.log_url,
      cert_index: row.entry_index === null ? null : Number(row.entry_index),
      cert_link: row.cert_link,
      seen: iso(row.seen),
      discovered_at: iso(row.discovered_at),
    },
  };
}

// Candidate rows read per query: the window is walked newest first in pages of this size.
const PAGE = 1000;

/**
 * The certificates of one rule stored within the window (since, until], newest first. SQL keeps
 * the rows whose names contain the watched domain or a brand form (every exact, subdomain and
 * lookalike name contains one); each candidate's names are then classified here, so `total`
 * counts the window's candidates once, page by page, and only `limit` hits are kept.
 */
export async function matchCertificates(
  context: SourceContext,
  filter: CertificateFilter,
  window: MatchWindow,
  limit: number,
): Promise<MatchResult> {
  const { target } = filter;
  const needles = [target.domain, ...target.brands];
  const ignored = filter.ignoreIssuers.map((issuer) => issuer.toLowerCase()).filter(Boolean);
  const isIgnored = (row: Selectable<CertificateTable>) =>
    ignored.length > 0 &&
    [row.issuer_org, row.issuer_cn].some(
      (name) => name !== null && ignored.some((part) => name.toLowerCase().includes(part)),
    );

  const hits: Hit[] = [];
  let total = 0;
  let after: { at: number; id: number } | null = null;
  for (;;) {
    const page: Selectable<CertificateTable>[] = await certificateDb(context)
      .selectFrom('certificates')
      .selectAll()
      .where((eb) => {
        const conditions: Expression<SqlBool>[] = [
          eb.or(needles.map((needle) => likeContains(sql`domains`, needle))),
          eb('discovered_at', '<=', window.until),
        ];
        if (window.since !== null) conditions.push(eb('discovered_at', '>', window.since));
        if (!filter.includePrecertificates) conditions.push(eb('entry_type', '=', 'x509'));
        if (after)
          conditions.push(
            eb.or([
              eb('discovered_at', '<', after.at),
              eb.and([eb('discovered_at', '=', after.at), eb('id', '<', after.id)]),
            ]),
          );
        return eb.and(conditions);
      })
      .orderBy('discovered_at', 'desc')
      .orderBy('id', 'desc')
      .limit(PAGE)
      .execute();
    for (const row of page) {
      if (isIgnored(row)) continue;
      const match = matchNames(row.domains ? row.domains.split(' ') : [], target);
      if (!match) continue;
      total++;
      if (hits.length < limit) hits.push(certificateHit(row, match));
    }
    if (page.length < PAGE) break;
    const last = page[page.length - 1]!;
    after = { at: Number(last.discovered_at), id: Number(last.id) };
  }
  return { hits, total };
}
