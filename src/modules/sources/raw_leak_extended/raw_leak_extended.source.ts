import { sourceWithoutData } from '../source.ts';

/**
 * Raw leak extended search (id 4): a full scan of the raw files of every indexed leak (dumps,
 * SQL exports, logs) for a term. It is the expensive source, hence async: a run starts a
 * background job that fills the match when the scan completes (spec 3.3.5).
 *
 * Hit data: leak_name, file_path, file_type, line_number, line (the matching line, secrets
 * masked), matched_term, term_type, leak_published_at, indexed_at.
 */
export const rawLeakExtendedSource = sourceWithoutData({
  id: 4,
  name: 'raw_leak_extended',
  alias: 'Raw leak extended search',
  description: 'Full-text scan of raw leak files (dumps, SQL exports, logs) for a domain, email, IP, phone, username or keyword.',
  serviceType: 'async',
  frequency: 'weekly',
  params: [
    { name: 'query', type: 'String', required: true, hint: 'Term searched in every line of the raw leak files', example: 'acme-bank.com' },
    {
      name: 'term_type',
      type: 'String',
      required: false,
      hint: 'How the term is matched; keyword (substring) when omitted',
      example: 'domain',
      valid_values: ['domain', 'email', 'ip', 'phone', 'username', 'keyword'],
    },
    { name: 'file_types', type: 'Array[String]', required: false, hint: 'Only files of these kinds', example: ['sql', 'csv'], valid_values: ['txt', 'csv', 'sql', 'json', 'log', 'xml'] },
    { name: 'case_sensitive', type: 'Boolean', required: false, hint: 'Match the term case-sensitively (off by default)', example: false },
  ],
  excludableFields: ['leak_name', 'file_path'],
  filterableFields: ['leak_name', 'file_type', 'term_type'],
  sortableFields: ['indexed_at', 'leak_published_at', 'leak_name'],
});
