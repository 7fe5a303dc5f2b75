import { stringify } from 'csv-stringify/sync';

/**
 * Where a spreadsheet may start reading a formula: the cell's start, and after any character some
 * locale's import splits cells at (comma, semicolon, pipe, tab, line breaks), past the blanks it
 * trims. The character found there is captured; a separator captured so still starts the next
 * place (the lookbehind reads the text, not what was matched).
 */
const FORMULA_START = /(?<=^|[,;|\t\r\n])([^\S\t\r\n]*)(.)/gsu;

/**
 * What starts a formula: = + - @ (and the minus sign), tab and CR (OWASP "CSV injection"). A
 * character counts by its NFKC form too, so full-width ＝ and small ﹢ are triggers.
 */
const TRIGGERS = new Set(['=', '+', '-', '@', '\u2212', '\t', '\r']);

const isTrigger = (character: string) => TRIGGERS.has(character) || TRIGGERS.has(character.normalize('NFKC').charAt(0));

/**
 * A cell no spreadsheet evaluates: an apostrophe ("text follows") before every trigger found
 * where a formula could start (see FORMULA_START).
 */
export function neutralizeFormula(cell: string): string {
  return cell.replace(FORMULA_START, (whole, blanks: string, first: string) =>
    isTrigger(first) ? `${blanks}'${first}` : whole,
  );
}

/**
 * CSV as every export writes it: each cell neutralized and every field quoted, so that no cell
 * is read as a number or formula whatever separator the reading spreadsheet assumes.
 */
export function csvRows(rows: readonly (readonly string[])[], options: { bom?: boolean } = {}): string {
  return stringify(
    rows.map((row) => row.map(neutralizeFormula)),
    { quoted: true, quoted_empty: true, bom: options.bom ?? false },
  );
}
