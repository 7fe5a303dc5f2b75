import type { Generated } from 'kysely';
import type { SourceContext } from '../../kit/source.ts';
import { parseDomainName, type DomainName } from './domain-name.ts';
import * as m0001 from './migrations/0001_observed_domains.ts';

/** How Dragnet learned of a domain. */
export type ObservedOrigin = 'nrd' | 'certificate' | 'dnstwist';

/** A newly observed domain as an ingester or another source (certificate names) hands it in. */
export interface ObservedDomain {
  domain: string;
  origin: ObservedOrigin;
  registrar?: string | null;
  ip?: string | null;
  ipv6?: string | null;
  name_servers?: string[] | null;
  mx?: string[] | null;
  country?: string | null;
  /** When the domain was registered (epoch ms), when the input says. */
  registered_at?: number | null;
  /** When the input's own source first saw the domain (epoch ms), e.g. an NRD list's compile time. */
  first_seen?: number | null;
}

/** The table of migration phishing/0001_observed_domains. */
export interface ObservedDomainTable {
  id: Generated<number>;
  domain: string;
  registrable: string;
  origin: string;
  registrar: string | null;
  ip: string | null;
  ipv6: string | null;
  /** JSON array of host names. */
  name_servers: string | null;
  /** JSON array of host names. */
  mx: string | null;
  country: string | null;
  registered_at: number | null;
  first_seen: number;
  discovered_at: number;
}

// A type alias, not an interface: withTables needs an index-signature-compatible type.
export type PhishingTables = { observed_domains: ObservedDomainTable };

export const phishingMigrations = { 'phishing/0001_observed_domains': m0001 };

export const phishingDb = (context: SourceContext) => context.db.withTables<PhishingTables>();

// Rows per INSERT: 12 columns × 1000 stays under SQLite's 32,766 bound variables.
const ROWS_PER_STATEMENT = 1000;

const ENRICHMENT = ['registrar', 'ip', 'ipv6', 'name_servers', 'mx', 'country', 'registered_at'] as const;

type Row = Omit<ObservedDomainTable, 'id'>;

const listOf = (values: string[] | null | undefined) => (values?.length ? JSON.stringify(values) : null);
const textOf = (value: string | null | undefined) => (value?.trim() ? value.trim() : null);

function rowOf(domain: ObservedDomain, name: DomainName, now: number): Row {
  const registeredAt = domain.registered_at ?? null;
  return {
    domain: name.domain,
    registrable: name.registrable,
    origin: domain.origin,
    registrar: textOf(domain.registrar),
    ip: textOf(domain.ip),
    ipv6: textOf(domain.ipv6),
    name_servers: listOf(domain.name_servers),
    mx: listOf(domain.mx),
    country: textOf(domain.country),
    registered_at: registeredAt,
    // The earliest date known: a registration or a list's date before Dragnet heard of it.
    first_seen: Math.min(now, registeredAt ?? now, domain.first_seen ?? now),
    discovered_at: now,
  };
}

/** A domain whose name was already checked (parseDomainName), ready to store. */
export interface CheckedDomain {
  name: DomainName;
  domain: ObservedDomain;
}

/**
 * Stores checked domains in one transaction, each once: a domain already stored is a duplicate
 * and keeps its discovered_at and origin, but gains the registrar, addresses, name servers, MX,
 * country and registration date it lacked when this input has them (a dnstwist scan after an
 * NRD list), and an earlier first_seen with them. `discoveredAt` defaults to the clock's now (demo data is dated back).
 */
export async function writeObservedDomains(
  context: SourceContext,
  checked: CheckedDomain[],
  discoveredAt = context.clock.now().getTime(),
): Promise<{ added: number; duplicates: number }> {
  const now = discoveredAt;
  const rows = new Map<string, Row>();
  for (const { name, domain } of checked) if (!rows.has(name.domain)) rows.set(name.domain, rowOf(domain, name, now));
  if (rows.size === 0) return { added: 0, duplicates: checked.length };
  const all = [...rows.values()];
  const added = await phishingDb(context)
    .transaction()
    .execute(async (tx) => {
      const inserted = new Set<string>();
      for (let i = 0; i < all.length; i += ROWS_PER_STATEMENT) {
        const returned = await tx
          .insertInto('observed_domains')
          .values(all.slice(i, i + ROWS_PER_STATEMENT))
          .onConflict((oc) => oc.column('domain').doNothing())
          .returning('domain')
          .execute();
        for (const row of returned) inserted.add(row.domain);
      }
      for (const row of all) {
        const known = ENRICHMENT.filter((key) => row[key] !== null);
        if (inserted.has(row.domain) || known.length === 0) continue;
        await tx
          .updateTable('observed_domains')
          .set((eb) => ({
            ...Object.fromEntries(known.map((key) => [key, eb.fn.coalesce(key, eb.val(row[key]))])),
            // A registration date the first input did not give moves first_seen back.
            first_seen: eb
              .case()
              .when('first_seen', '>', row.first_seen)
              .then(row.first_seen)
              .else(eb.ref('first_seen'))
              .end(),
          }))
          .where('domain', '=', row.domain)
          .execute();
      }
      return inserted.size;
    });
  return { added, duplicates: checked.length - added };
}

/**
 * The entry point for other sources (certificate names) and the ingesters: stores newly
 * observed domains as writeObservedDomains does. Names that are no domain (an IP, a bad label,
 * no public suffix) are counted as `invalid` and skipped; callers that report per record check
 * names first with parseDomainName.
 */
export async function recordObservedDomains(
  context: SourceContext,
  domains: ObservedDomain[],
): Promise<{ added: number; duplicates: number; invalid: number }> {
  const checked: CheckedDomain[] = [];
  for (const domain of domains) {
    const name = parseDomainName(domain.domain);
    if (typeof name !== 'string') checked.push({ name, domain });
  }
  return { ...(await writeObservedDomains(context, checked)), invalid: domains.length - checked.length };
}
