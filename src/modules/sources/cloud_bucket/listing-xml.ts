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
  /** One object entry (numbered from 1), its leaf elements by path below it (`Key`, `Properties/Content-Length`). */
  | { kind: 'record'; number: number; fields: Map<string, string> };

/** Whether the element at `depth` (the root is 1) under `names` opens an object entry: S3's Contents, Azure's Blobs/Blob. */
const opensRecord = (names: string[], depth: number): boolean =>
  (depth === 2 && names[1] === 'ListBucketResult' && names[2] === 'Contents') ||
  (depth === 3 && names[1] === 'EnumerationResults' && names[2] === 'Blobs' && names[3] === 'Blob');

// Object names are at most 1,024 characters; text beyond this in one element is dropped.
const MAX_TEXT = 8192;

/** Malformed XML, and after which object entry the parser found it. */
export class XmlSyntaxError extends Error {
  constructor(
    readonly location: string,
    readonly reason: string,
  ) {
    super(`${location}: ${reason}`);
  }
}

const localName = (name: string) => name.slice(name.indexOf(':') + 1);

/**
 * Feeds text in pieces; each call returns the events it completed. Throws XmlSyntaxError.
 * Entries are numbered (`object N`) rather than located by line: saxes parses several times
 * faster without tracking positions.
 */
export function createXmlEventReader() {
  const parser = new SaxesParser({ position: false, xmlns: false });
  let events: XmlEvent[] = [];
  // names[1] is the root; names[depth] the open element.
  const names: string[] = [''];
  let depth = 0;
  let record: { depth: number; fields: Map<string, string> } | null = null;
  let records = 0;
  let text = '';
  let leaf = false;

  parser.on('opentag', (tag: SaxesTagPlain) => {
    names[++depth] = localName(tag.name);
    text = '';
    leaf = true;
    if (depth === 1) {
      const attributes = Object.fromEntries(
        Object.entries(tag.attributes).map(([name, value]) => [localName(name), value]),
      );
      events.push({ kind: 'root', name: names[1]!, attributes });
    } else if (record === null && opensRecord(names, depth)) {
      record = { depth, fields: new Map() };
    }
  });
  const addText = (piece: string) => {
    if (leaf && text.length < MAX_TEXT) text += piece.length > MAX_TEXT ? piece.slice(0, MAX_TEXT) : piece;
  };
  parser.on('text', addText);
  parser.on('cdata', addText);
  parser.on('closetag', () => {
    if (record !== null && depth === record.depth) {
      events.push({ kind: 'record', number: ++records, fields: record.fields });
      record = null;
    } else if (leaf && record !== null) {
      // Fields one or two levels below the entry: Key, Properties/Content-Length.
      const below = depth - record.depth;
      if (below === 1) record.fields.set(names[depth]!, text.trim());
      else if (below === 2) record.fields.set(`${names[depth - 1]}/${names[depth]}`, text.trim());
    } else if (leaf && depth === 2) {
      events.push({ kind: 'field', name: names[2]!, value: text.trim() });
    }
    leaf = false;
    depth--;
  });

  const run = (step: () => void): XmlEvent[] => {
    try {
      step();
    } catch (error) {
      throw new XmlSyntaxError(
        records ? `after object ${records}` : 'before the first object',
        `malformed XML: ${(error as Error).message}`,
      );
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
