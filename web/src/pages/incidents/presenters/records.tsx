import {
  at,
  byteSize,
  code,
  Facts,
  link,
  list,
  PostedText,
  RevealablePassword,
  text,
  WebLink,
  type PresenterProps,
} from './parts.tsx';

const countryNames = new Intl.DisplayNames(undefined, { type: 'region' });

/** An ISO 3166-1 alpha-2 code as its name, the code beside it ("Germany (DE)"). */
export function country(code: string | null): string | null {
  if (!code) return null;
  try {
    return `${countryNames.of(code.toUpperCase()) ?? code} (${code.toUpperCase()})`;
  } catch {
    return code;
  }
}

/** A stolen login: who, where, the masked password, and the machine and leak it came from. */
export function CredentialHit({ hit }: PresenterProps) {
  return (
    <Facts
      facts={[
        ['Login', text(hit, 'email') ?? text(hit, 'username') ?? text(hit, 'login')],
        ['Password', text(hit, 'password') && <RevealablePassword hit={hit} />],
        ['Password type', text(hit, 'hash_type') ?? (hit.password_type === 'hash' ? 'hash' : null)],
        ['Site', text(hit, 'url') ?? text(hit, 'domain')],
        ['App', text(hit, 'app_id')],
        ['Software', text(hit, 'software')],
        ['Machine country', country(text(hit, 'country'))],
        ['Machine OS', text(hit, 'os')],
        ['Machine', text(hit, 'machine')],
        ['Leaked', at(hit, 'leaked_at')],
        ['Leak', text(hit, 'leak_name') && `${text(hit, 'leak_name')} (${text(hit, 'leak_type')?.replace('_', ' ')})`],
        ['Seen', typeof hit.occurrences === 'number' && `${hit.occurrences.toLocaleString()} times`],
        ['First seen', at(hit, 'first_seen')],
        ['Last seen', at(hit, 'last_seen')],
        ['Discovered', at(hit, 'discovered_at')],
      ]}
    />
  );
}

/** A card: never the number or a CVV, only the masked PAN and what its BIN tells. */
export function CardHit({ hit }: PresenterProps) {
  const price = typeof hit.price === 'number' ? `$${hit.price.toLocaleString()}` : null;
  return (
    <Facts
      facts={[
        ['Card', code(hit, 'masked_pan')],
        ['Brand', text(hit, 'brand')],
        ['Type', text(hit, 'card_type')],
        ['Level', text(hit, 'level')],
        ['Issuer', text(hit, 'issuer')],
        ['Issuer country', country(text(hit, 'country'))],
        ['Expiry', text(hit, 'expiry')],
        ['CVV', hit.has_cvv === true ? 'offered (not stored)' : 'no'],
        ['Holder', text(hit, 'holder')],
        ['Billing', [text(hit, 'billing_state'), text(hit, 'billing_country')].filter(Boolean).join(', ')],
        ['Shop', [text(hit, 'shop'), text(hit, 'base')].filter(Boolean).join(' / ')],
        ['Price', price],
        ['Found in', text(hit, 'source_name') && `${text(hit, 'source_name')} (${text(hit, 'source_type')})`],
        ['Discovered', at(hit, 'discovered_at')],
      ]}
    />
  );
}

/** A certificate: its names, the one(s) that matched marked, issuer, validity and its CT entry. */
export function CertificateHit({ hit }: PresenterProps) {
  const matched = new Set(list(hit, 'matched_names'));
  return (
    <>
      <ul className="chips" aria-label="Names in the certificate">
        {list(hit, 'all_domains').map((name) => (
          <li key={name}>{matched.has(name) ? <mark title="matched">{name}</mark> : name}</li>
        ))}
      </ul>
      <Facts
        facts={[
          ['Match', text(hit, 'match_type')],
          ['Issuer', text(hit, 'issuer')],
          ['Subject organization', text(hit, 'subject_org')],
          ['Valid from', at(hit, 'not_before')],
          ['Valid until', at(hit, 'not_after')],
          ['Entry', text(hit, 'update_type') === 'PrecertLogEntry' ? 'precertificate' : 'certificate'],
          [
            'CT log',
            text(hit, 'log_name') && (
              <WebLink href={text(hit, 'cert_link')}>
                {text(hit, 'log_name')} #{text(hit, 'cert_index')}
              </WebLink>
            ),
          ],
          ['Seen', at(hit, 'seen')],
          ['SHA-256', code(hit, 'fingerprint')],
        ]}
      />
    </>
  );
}

/** A lookalike domain beside the domain it imitates, with what makes it dangerous. */
export function LookalikeHit({ hit }: PresenterProps) {
  const unicode = text(hit, 'unicode');
  return (
    <>
      <p className="lookalike">
        <strong>{unicode ?? text(hit, 'domain')}</strong>
        {unicode && <span className="muted"> ({text(hit, 'domain')})</span>} imitates{' '}
        <strong>{text(hit, 'watched')}</strong>
      </p>
      <Facts
        facts={[
          ['Fuzzer', text(hit, 'fuzzer')],
          ['Score', text(hit, 'score') && `${text(hit, 'score')} / 100`],
          ['Edit distance', text(hit, 'distance')],
          ['Brand in subdomain', hit.brand_in_subdomain === true && 'yes'],
          ['A', text(hit, 'ip')],
          ['AAAA', text(hit, 'ipv6')],
          ['MX', list(hit, 'mx').join(', ') || (hit.has_mx === true ? 'yes' : null)],
          ['Name servers', list(hit, 'name_servers').join(', ')],
          ['Country', country(text(hit, 'country'))],
          ['Registrar', text(hit, 'registrar')],
          ['Registered', at(hit, 'registered_at')],
          ['First seen', at(hit, 'first_seen')],
          ['Found by', text(hit, 'origin')],
        ]}
      />
    </>
  );
}

/** A short link and where it leads; the target stays text, as it may be the phishing page. */
export function ShortLinkHit({ hit }: PresenterProps) {
  return (
    <Facts
      facts={[
        ['Short link', code(hit, 'short_url')],
        ['Leads to', code(hit, 'target_url')],
        ['Target host', text(hit, 'target_host')],
        ['Service', text(hit, 'service')],
        ['Crawled', at(hit, 'crawled_at')],
        ['Discovered', at(hit, 'discovered_at')],
      ]}
    />
  );
}

/** A ransomware group's post naming a victim. */
export function RansomwareHit({ hit, terms }: PresenterProps) {
  return (
    <>
      <Facts
        facts={[
          ['Group', text(hit, 'group')],
          ['Victim', text(hit, 'victim')],
          ['Website', text(hit, 'website')],
          ['Country', country(text(hit, 'country'))],
          ['Sector', text(hit, 'activity')],
          ['Published', at(hit, 'published_at')],
          ['Listed', at(hit, 'listed_at')],
          ['Matched on', text(hit, 'matched_on')],
          ['Leak-site post', code(hit, 'post_url')],
          ['Permalink', link(hit, 'permalink')],
        ]}
      />
      <PostedText value={text(hit, 'description')} terms={terms} label="Description" />
    </>
  );
}

/** An app listing that uses the brand. */
export function AppListingHit({ hit }: PresenterProps) {
  const rating =
    typeof hit.rating === 'number' ? `${hit.rating.toFixed(1)} (${text(hit, 'rating_count') ?? 0} ratings)` : null;
  return (
    <>
      <p>
        <strong>{text(hit, 'name')}</strong> <code>{text(hit, 'app_id')}</code>
        {hit.lookalike === true && <span className="badge">lookalike</span>}
      </p>
      <Facts
        facts={[
          ['Developer', text(hit, 'developer')],
          ['Store', `${text(hit, 'store')} (${text(hit, 'platform')})`],
          ['Version', text(hit, 'version')],
          ['Installs', typeof hit.installs === 'number' && `${hit.installs.toLocaleString()}+`],
          ['Rating', rating],
          ['Category', text(hit, 'genre')],
          ['Released', at(hit, 'released_at')],
          ['Updated', at(hit, 'updated_at')],
          ['Why', text(hit, 'reason')],
          ['Listing', link(hit, 'url', 'Open in the store')],
        ]}
      />
    </>
  );
}

/** An object readable by anyone in a storage bucket. */
export function BucketObjectHit({ hit }: PresenterProps) {
  return (
    <Facts
      facts={[
        ['Object', <code>{`${text(hit, 'bucket')}/${text(hit, 'key')}`}</code>],
        ['Provider', [text(hit, 'provider'), text(hit, 'region')].filter(Boolean).join(', ')],
        ['Size', byteSize(hit.size)],
        ['Type', text(hit, 'extension')],
        ['Modified', at(hit, 'last_modified')],
        ['Matched on', text(hit, 'matched_on')],
        ['URL', link(hit, 'url')],
        ['Discovered', at(hit, 'discovered_at')],
      ]}
    />
  );
}
