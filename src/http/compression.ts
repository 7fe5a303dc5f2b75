import { promisify } from 'node:util';
import { brotliCompress, brotliCompressSync, constants, gzip, gzipSync } from 'node:zlib';
import type { FastifyInstance } from 'fastify';

/** Below this a JSON answer goes as it is: compressing it costs more CPU than the bytes it saves. */
export const COMPRESSION_THRESHOLD_BYTES = 1024;

/**
 * Below this an answer is compressed on the event loop: a search page (8 KB, 2.6 KB as brotli 1)
 * takes some 50 µs to compress, and sending it to the thread pool and back cost about as much
 * CPU again, and as much in latency. Larger answers go to the pool, not to hold the loop up.
 */
export const POOLED_COMPRESSION_BYTES = 16 * 1024;

/**
 * The fastest levels, whatever the size: an answer is compressed once, for one request. A search
 * page (8.2 KB of JSON) took 205 µs at brotli 4 and 49 µs at brotli 1 for 7% more bytes (2,401
 * against 2,562), gzip 172 µs at level 6 and 84 µs at level 1 (2,398 against 2,538); a TAXII
 * page (0.5–5 MB of STIX) at brotli 4 or gzip 6 cost about as much CPU as building it (docs/taxii.md).
 */
const brotliOptions = (data: Buffer) => ({
  params: {
    [constants.BROTLI_PARAM_QUALITY]: 1,
    [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
    [constants.BROTLI_PARAM_SIZE_HINT]: data.length,
  },
});
const gzipOptions = () => ({ level: 1 });

const ENCODERS = {
  br: { options: brotliOptions, inline: brotliCompressSync, pooled: promisify(brotliCompress) },
  gzip: { options: gzipOptions, inline: gzipSync, pooled: promisify(gzip) },
} as const;

type Encoding = keyof typeof ENCODERS;

/**
 * The encoding to answer with from an Accept-Encoding header: brotli before gzip when both are
 * taken, the client's q-values first; none when it takes neither (or refuses them with q=0).
 */
export function chooseEncoding(acceptEncoding: string | undefined): Encoding | undefined {
  if (!acceptEncoding) return undefined;
  const weights = new Map<string, number>();
  for (const part of acceptEncoding.split(',')) {
    const [name = '', ...parameters] = part.trim().toLowerCase().split(';');
    const q = parameters.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)?.[1]).find((value) => value !== undefined);
    weights.set(name.trim(), q === undefined ? 1 : Number(q));
  }
  const weightOf = (encoding: Encoding) => weights.get(encoding) ?? weights.get('*') ?? 0;
  const best = (['br', 'gzip'] as const)
    .filter((encoding) => weightOf(encoding) > 0)
    .sort((a, b) => weightOf(b) - weightOf(a))[0];
  return best;
}

/** A Vary header value that names Accept-Encoding, keeping what `vary` named already. */
export function varyOnAcceptEncoding(vary: unknown): string {
  const current = typeof vary === 'string' ? vary.trim() : '';
  const named = current.split(',').map((name) => name.trim().toLowerCase());
  if (named.includes('accept-encoding') || named.includes('*')) return current;
  return current ? `${current}, Accept-Encoding` : 'Accept-Encoding';
}

/** JSON, and TAXII 2.1's JSON (its envelopes of STIX objects are the largest answers there are). */
const COMPRESSED_TYPES = ['application/json', 'application/taxii+json'];

/**
 * Compresses JSON answers over the threshold when the client takes br or gzip. Only JSON: files
 * (exports, the dashboard's precompressed assets) and streams go as they are.
 */
export function registerJsonCompression(app: FastifyInstance): void {
  // A callback hook, not an async one: nearly every answer goes as it is, and an async hook
  // would cost each of them a promise and a turn of the microtask queue.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return done(null, payload);
    // Measured first, without a copy: most answers are small strings that go as they are, and a
    // string's length alone settles most of them (a UTF-16 unit is at most 3 bytes of UTF-8).
    const size =
      typeof payload !== 'string'
        ? payload.length
        : payload.length * 3 < COMPRESSION_THRESHOLD_BYTES
          ? payload.length
          : Buffer.byteLength(payload);
    if (size < COMPRESSION_THRESHOLD_BYTES) return done(null, payload);
    const type = reply.getHeader('content-type');
    if (typeof type !== 'string' || !COMPRESSED_TYPES.some((json) => type.startsWith(json))) return done(null, payload);
    if (reply.hasHeader('content-encoding')) return done(null, payload);
    // This answer goes compressed to some clients and not to others: a cache must not mix them.
    reply.header('vary', varyOnAcceptEncoding(reply.getHeader('vary')));
    const encoding = chooseEncoding(request.headers['accept-encoding']);
    if (!encoding) return done(null, payload);
    reply.header('content-encoding', encoding);
    reply.removeHeader('content-length');
    const data = typeof payload === 'string' ? Buffer.from(payload) : payload;
    const encoder = ENCODERS[encoding];
    if (data.length >= POOLED_COMPRESSION_BYTES) {
      encoder.pooled(data, encoder.options(data)).then((compressed) => done(null, compressed), done);
      return;
    }
    let compressed: Buffer;
    try {
      compressed = encoder.inline(data, encoder.options(data));
    } catch (error) {
      return done(error as Error);
    }
    done(null, compressed);
  });
}
