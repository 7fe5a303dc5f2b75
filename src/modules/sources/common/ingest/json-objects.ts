import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';

/** One top-level JSON object of a stream (its text, not yet parsed), or why a stretch of it is none. */
export type JsonObjectText = { line: number; text: string } | { line: number; error: string };

const OPEN = 0x7b; // {
const CLOSE = 0x7d; // }
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const NEWLINE = 0x0a;
// Between objects: whitespace, and the commas and brackets of an array that holds them.
const BETWEEN = new Set([0x20, 0x09, 0x0a, 0x0d, 0x2c, 0x5b, 0x5d]);

/**
 * The objects of a stream of JSON objects in any layout: one a line, pretty-printed over many
 * lines, the elements of one top-level array, or concatenated without separators. Objects are
 * found by their braces outside strings, so one is never held whole before its end is read, and
 * a larger one than `maxChars` is skipped with an error. `line` is where the object starts.
 */
export async function* jsonObjects(
  stream: Readable,
  options: { maxChars: number; onBytes?: (bytes: number) => void },
): AsyncGenerator<JsonObjectText> {
  const decoder = new StringDecoder('utf8');
  let line = 1;
  let depth = 0;
  let inString = false;
  let escaped = false;
  let parts: string[] = [];
  let size = 0;
  let tooLarge = false;
  let startLine = 0;
  let strayLine = 0;
  for await (const raw of stream as AsyncIterable<Buffer | string>) {
    const bytes = typeof raw === 'string' ? Buffer.from(raw) : raw;
    options.onBytes?.(bytes.length);
    const chunk = decoder.write(bytes);
    let start = 0;
    for (let i = 0; i < chunk.length; i++) {
      const code = chunk.charCodeAt(i);
      if (code === NEWLINE) line++;
      if (depth === 0) {
        if (code === OPEN) {
          if (strayLine) yield { line: strayLine, error: 'not JSON' };
          strayLine = 0;
          depth = 1;
          start = i;
          startLine = line;
        } else if (!BETWEEN.has(code) && !strayLine && !(i === 0 && code === 0xfeff)) {
          strayLine = line;
        }
        continue;
      }
      if (inString) {
        if (escaped) escaped = false;
        else if (code === BACKSLASH) escaped = true;
        else if (code === QUOTE) inString = false;
      } else if (code === QUOTE) {
        inString = true;
      } else if (code === OPEN) {
        depth++;
      } else if (code === CLOSE && --depth === 0) {
        if (tooLarge) yield { line: startLine, error: `an object larger than ${options.maxChars} characters` };
        else
          yield {
            line: startLine,
            text: parts.length ? parts.join('') + chunk.slice(start, i + 1) : chunk.slice(start, i + 1),
          };
        parts = [];
        size = 0;
        tooLarge = false;
      }
    }
    if (depth > 0 && !tooLarge) {
      const rest = chunk.slice(start);
      size += rest.length;
      if (size > options.maxChars) {
        tooLarge = true;
        parts = [];
      } else {
        parts.push(rest);
      }
    }
  }
  if (depth > 0) yield { line: startLine, error: 'cut off: the input ends inside this object' };
  else if (strayLine) yield { line: strayLine, error: 'not JSON' };
}
