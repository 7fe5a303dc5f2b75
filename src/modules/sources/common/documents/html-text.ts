import { Parser } from 'htmlparser2';

/**
 * Forum scrapers and Discourse (`cooked`) give post bodies as HTML: the query searches, and
 * previews show, its text. Tags go, entities are decoded (htmlparser2), and a block element or
 * `<br>` ends a line so that words of two paragraphs never run together.
 */

const BLOCKS = new Set([
  'address',
  'article',
  'aside',
  'blockquote',
  'br',
  'dd',
  'div',
  'dl',
  'dt',
  'fieldset',
  'figcaption',
  'figure',
  'footer',
  'form',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'header',
  'hr',
  'li',
  'main',
  'nav',
  'ol',
  'p',
  'pre',
  'section',
  'table',
  'tbody',
  'td',
  'tfoot',
  'th',
  'thead',
  'tr',
  'ul',
]);
// Their content is no text a reader sees.
const HIDDEN = new Set(['script', 'style', 'noscript', 'template', 'head']);

/** Whether `value` looks like HTML markup rather than plain text that happens to hold a `<`. */
export const looksLikeHtml = (value: string): boolean =>
  /<\/?(?:[a-z][a-z0-9]*)(?:\s[^<>]*)?\/?>|&(?:[a-z]+|#\d+|#x[0-9a-f]+);/i.test(value);

/** The text of an HTML fragment: lines trimmed, no blank line (a preview is short). */
export function htmlToText(html: string): string {
  const parts: string[] = [];
  let hidden = 0;
  let inPre = 0;
  const parser = new Parser(
    {
      onopentag(name) {
        if (HIDDEN.has(name)) hidden++;
        if (name === 'pre') inPre++;
        if (BLOCKS.has(name)) parts.push('\n');
        // Table cells of one row stay on their line, apart.
        if (name === 'td' || name === 'th') parts.push('\t');
      },
      ontext(text) {
        if (hidden === 0) parts.push(inPre > 0 ? text : text.replace(/\s+/g, ' '));
      },
      onclosetag(name) {
        if (HIDDEN.has(name)) hidden = Math.max(0, hidden - 1);
        if (name === 'pre') inPre = Math.max(0, inPre - 1);
        if (BLOCKS.has(name)) parts.push('\n');
      },
    },
    { decodeEntities: true, lowerCaseTags: true },
  );
  parser.write(html);
  parser.end();
  return parts
    .join('')
    .split('\n')
    .map((line) => line.replace(/[ \t\u00a0]+/g, ' ').trim())
    .join('\n')
    .replace(/\n{2,}/g, '\n')
    .trim();
}
