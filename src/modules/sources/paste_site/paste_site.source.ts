import { Type } from '@sinclair/typebox';
import { fieldInAnyCase } from '../common/documents/document-match.ts';
import { documentSource } from '../common/documents/document-source.ts';
import { defineSource } from '../kit/source.ts';
import { loadDemoPastes } from './demo-pastes.ts';
import { pastebinList, pasteJsonLines } from './paste-formats.ts';
import { rawPastes, savedPastes } from './saved-pastes.ts';
import { pastebinCollector } from './pastebin-collector.ts';
import { pasteSiteStix } from './paste-site-stix.ts';

const SNIPPET_CHARS = 300;

/**
 * Paste site (id 12): public pastes (Pastebin's scraping API through the pastebin-scraping
 * collector, saved scraping lists, or any site's pastes as JSON Lines) in the document store
 * (../documents), matched on their title and content with the search query language.
 */
export const pasteSiteSource = defineSource({
  stix: pasteSiteStix,
  id: 12,
  name: 'paste_site',
  alias: 'Paste sites',
  description: 'Public pastes on paste sites such as Pastebin whose content matches the watched terms.',
  serviceType: 'sync',
  frequency: 'daily',
  excludableFields: ['user', 'syntax', 'site'],
  filterableFields: ['site', 'syntax', 'user'],
  sortableFields: ['posted_at', 'discovered_at', 'size', 'site'],
  hasData: true,
  ...documentSource({
    name: 'paste_site',
    args: Type.Object({
      query: Type.String({
        description: 'Search query: terms, "phrases", AND, OR, NOT, ( )',
        examples: ['acme-bank.com AND password'],
      }),
      sites: Type.Optional(
        Type.Array(Type.String(), {
          description: 'Only pastes of these sites, any case (e.g. pastebin, paste_ee, rentry, dpaste, gist)',
          examples: [['pastebin']],
        }),
      ),
      syntaxes: Type.Optional(
        Type.Array(Type.String(), {
          description: 'Only pastes with this syntax highlighting, any case (e.g. text, sql, json, python)',
          examples: [['text', 'sql']],
        }),
      ),
    }),
    search: (args) => {
      const filters = [];
      if (args.sites?.length) filters.push(fieldInAnyCase('site', args.sites));
      if (args.syntaxes?.length) filters.push(fieldInAnyCase('syntax', args.syntaxes));
      return { filters, contextChars: SNIPPET_CHARS, previewField: 'snippet' };
    },
    ingester: {
      description:
        "pastes: Dragnet JSON Lines, saved Pastebin scraping lists with their content, paste monitors' saved paste objects (pastepwn, PasteHunter), raw paste files; files, folders or - (stdin)",
      noun: 'pastes',
      formats: { jsonl: pasteJsonLines, pastebin: pastebinList, saved: savedPastes, raw: rawPastes },
    },
  }),
  collectors: [pastebinCollector],
  async demo(context, now) {
    const added = await loadDemoPastes(context, now);
    return `Demo paste sites: ${added} pastes added (try paste_site with the query acme-bank.com AND password)`;
  },
});
