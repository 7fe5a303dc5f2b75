import { appStoreSource } from './app_store/app_store.source.ts';
import { binCvvSource } from './bin_cvv/bin_cvv.source.ts';
import { certificateSource } from './certificate/certificate.source.ts';
import { chatServerSource } from './chat_server/chat_server.source.ts';
import { cloudBucketSource } from './cloud_bucket/cloud_bucket.source.ts';
import { creditCardSource } from './credit_card/credit_card.source.ts';
import { distinctLeakSource } from './distinct_leak/distinct_leak.source.ts';
import { filteredLeakSource } from './filtered_leak/filtered_leak.source.ts';
import { hackerForumSource } from './hacker_forum/hacker_forum.source.ts';
import { messengerSource } from './messenger/messenger.source.ts';
import { pasteSiteSource } from './paste_site/paste_site.source.ts';
import { phishingSource } from './phishing/phishing.source.ts';
import { ransomwareSource } from './ransomware/ransomware.source.ts';
import { rawLeakExtendedSource } from './raw_leak_extended/raw_leak_extended.source.ts';
import { urlShortenerSource } from './url_shortener/url_shortener.source.ts';
import { createRegistry } from './kit/registry.ts';
import type { SourceDefinition } from './kit/source.ts';

/**
 * The catalog: the 15 monitorable services of spec section 1, in id order. Ids are what rules
 * store (`service`), so they never change; a new source takes the next id. The store (its
 * tables), the CLI (`dragnet ingest`, `dragnet demo`), the catalog endpoint and the rule runner
 * read this list and name no source. docs/sources.md describes them.
 */
export const sourceCatalog: SourceDefinition[] = [
  messengerSource,
  chatServerSource,
  filteredLeakSource,
  rawLeakExtendedSource,
  distinctLeakSource,
  creditCardSource,
  binCvvSource,
  phishingSource,
  certificateSource,
  ransomwareSource,
  hackerForumSource,
  pasteSiteSource,
  appStoreSource,
  cloudBucketSource,
  urlShortenerSource,
];

export const { findSource, findIngester, listIngesters, listSourceCollectors, sourceMigrations } =
  createRegistry(sourceCatalog);
