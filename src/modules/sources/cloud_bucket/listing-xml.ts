import { SaxesParser, type SaxesTagPlain } from 'saxes';

/**
 * A bucket listing's XML (S3 ListBucketResult, Azure EnumerationResults, an error document) as a
 * stream of events, parsed as it arrives with saxes: memory holds one object entry, never the
 * document. Element names are compared without their namespace prefix.
 */
export type XmlEvent =
  /** The root element, with its attributes (Azure: ServiceEndpoint, ContainerName). */
  | { kind: 'root'; name: string; attributes: Record<string, string> }
  /** A leaf element right under the root: S3 Name, Prefix, IsTruncated; an error's Code, Message. */
  | { kind: 'field'; name: string; value: string }
  /** One object entry, its leaf elements by path below it (`Key`, `Properties/Content-Length`). */
  | { kind: 'record'; line: number; fields: Map<string, string> };

/** Where object entries are: S3's Contents, Azure's Blobs/Blob. */
const RECORD_PATHS = new Set(['ListBucketResult/Contents', 'EnumerationResults/Blobs/Blob']);

// Object names are at most 1,024 characters; text beyond this in one element is dropped.
const MAX_TEXT = 8192;

/** Malformed XML, where the parser found it. */
export class XmlSyntaxError extends Error {
  constructor(
    readonly location: string,
    readonly reason: string,
  ) {
    super(`${location}: ${reason}`);
  }
}

const localName = (name: string) => name.slice(name.indexOf(':') + 1);

/** Feeds text in pieces; each call returns the events it completed. Throws XmlSyntaxError. */
export function createXmlEventReader() {
  const parser = new SaxesParser({ position: true, xmlns: false });
  let events: XmlEvent[] = [];
  const path: string[] = [];
  let record: { line: number; depth: number; fields: Map<string, string> } | null = null;
  let text = '';
  let leaf = false;

  parser.on('opentag', (tag: SaxesTagPlain) => {
    path.push(localName(tag.name));
    text = '';
    leaf = true;
    if (path.length === 1) {
      const attributes = Object.fromEntries(Object.entries(tag.attributes).map(([name, value]) => [localName(name), value]));
      events.push({ kind: 'root', name: path[0]!, attributes });
    } else if (record === null && RECORD_PATHS.has(path.join('/'))) {
      record = { line: parser.line, depth: path.length, fields: new Map() };
    }
  });
  const addText = (piece: string) => {
    if (text.length < MAX_TEXT) text += piece.slice(0, MAX_TEXT - text.length);
  };
  parser.on('text', addText);
  parser.on('cdata', addText);
  parser.on('closetag', () => {
    if (record !== null && path.length === record.depth) {
      events.push({ kind: 'record', line: record.line, fields: record.fields });
      record = null;
    } else if (leaf && record !== null) {
      record.fields.set(path.slice(record.depth).join('/'), text.trim());
    } else if (leaf && path.length === 2) {
      events.push({ kind: 'field', name: path[1]!, value: text.trim() });
    }
    leaf = false;
    path.pop();
  });

  const run = (step: () => void): XmlEvent[] => {
    try {
      step();
    } catch (error) {
      // saxes reports "line:column: reason".
      const message = (error as Error).message;
      const at = /^(\d+):(\d+): (.*)$/s.exec(message);
      throw at ? new XmlSyntaxError(`line ${at[1]}, column ${Number(at[2]) + 1}`, `malformed XML: ${at[3]}`) : new XmlSyntaxError('XML', `malformed XML: ${message}`);
    }
    const done = events;
    events = [];
    return done;
  };

  return {
    write: (piece: string) => run(() => parser.write(piece)),
    /** The end of the input: an unclosed element is malformed. */
    close: () => run(() => parser.close()),
  };
}
