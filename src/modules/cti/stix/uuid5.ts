import { createHash } from 'node:crypto';

const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));

/**
 * RFC 9562 UUIDv5 with the namespace's bytes parsed once: the TAXII server maps 100k-hit
 * collections a page at a time, a handful of ids per hit (the `uuid` package parses the
 * namespace on every call). Same output as uuid's v5 (stix-ids.test.ts).
 */
export function uuidV5Generator(namespace: string): (name: string) => string {
  const namespaceBytes = Buffer.from(namespace.replace(/-/g, ''), 'hex');
  return (name) => {
    const hash = createHash('sha1').update(namespaceBytes).update(name, 'utf8').digest();
    hash[6] = (hash[6]! & 0x0f) | 0x50;
    hash[8] = (hash[8]! & 0x3f) | 0x80;
    let out = '';
    for (let i = 0; i < 16; i++) {
      out += HEX[hash[i]!];
      if (i === 3 || i === 5 || i === 7 || i === 9) out += '-';
    }
    return out;
  };
}
