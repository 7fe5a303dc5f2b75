import type { ComponentType } from 'react';
import { parseQuery, positiveTerms } from '../../../../../src/modules/sources/common/query/query-language.ts';
import { FieldList } from './field-list.tsx';
import type { PresenterProps } from './parts.tsx';
import { ChatServerHit, ForumHit, MessengerHit, PasteHit, RawLeakHit } from './posts.tsx';
import {
  AppListingHit,
  BucketObjectHit,
  CardHit,
  CertificateHit,
  CredentialHit,
  LookalikeHit,
  RansomwareHit,
  ShortLinkHit,
} from './records.tsx';

/**
 * How each source's hit is shown (docs/sources.md lists their fields), by the source's catalog
 * name. A source not listed here falls back to the generic list of fields.
 */
export const presenters: Record<string, ComponentType<PresenterProps>> = {
  messenger: MessengerHit,
  chat_server: ChatServerHit,
  filtered_leak: CredentialHit,
  raw_leak_extended: RawLeakHit,
  distinct_leak: CredentialHit,
  credit_card: CardHit,
  bin_cvv: CardHit,
  phishing: LookalikeHit,
  certificate: CertificateHit,
  ransomware: RansomwareHit,
  hacker_forum: ForumHit,
  paste_site: PasteHit,
  app_store: AppListingHit,
  cloud_bucket: BucketObjectHit,
  url_shortener: ShortLinkHit,
};

/** A hit drawn by its source's presenter, or as the source's fields when it has none. */
export function HitBody({ service, ...props }: PresenterProps & { service: string }) {
  const Presenter = presenters[service];
  return Presenter ? <Presenter {...props} /> : <FieldList hit={props.hit} />;
}

/**
 * The folded terms a rule looks for, to mark in its hits: those of a query-language `query`
 * (not under a NOT), else the text of its keyword, brand or query arg.
 */
export function ruleTerms(args: Record<string, unknown>): string[] {
  const query = args.query ?? args.keyword;
  if (typeof query !== 'string' || !query.trim()) return [];
  try {
    return positiveTerms(parseQuery(query).tree).filter((term) => term.length > 0);
  } catch {
    return [];
  }
}
