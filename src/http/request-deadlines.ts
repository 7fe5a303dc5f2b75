import type { ServerOptions } from 'node:http';
import { PassThrough, type Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RequestDeadlines } from '../config.ts';
import { AppError } from '../lib/errors.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route reads its body as a stream (POST /ingest/): instead of one deadline for the
     * whole body, the client must keep up a minimum rate (docs/api.md "Slow requests").
     */
    streamedBody?: boolean;
  }
}

/**
 * Node's own deadline for the request line and headers: a client that trickles them is answered
 * 408 by the client-error handler (protocol-errors.ts). Node checks its connections for it on an
 * interval, a quarter of the deadline here (at most a second), so it fires close to it. Node's
 * whole-request deadline stays off: a large upload must not be cut by a fixed time.
 */
export function headerDeadlineOptions(deadlines: RequestDeadlines): { requestTimeout: number; http: ServerOptions } {
  const checkEveryMs = Math.max(10, Math.min(1000, Math.floor(deadlines.headersMs / 4)));
  return {
    requestTimeout: 0,
    http: { headersTimeout: deadlines.headersMs, connectionsCheckingInterval: checkEveryMs },
  };
}

const streams = new WeakMap<FastifyRequest, Readable>();

/** The body of a `streamedBody` route, guarded by its rate rule; read it instead of request.raw. */
export const bodyStream = (request: FastifyRequest): Readable => streams.get(request) ?? request.raw;

/** A body Fastify hands to a parser: it never reads one of a GET or HEAD. */
const readsBody = (request: FastifyRequest) =>
  request.method !== 'GET' &&
  request.method !== 'HEAD' &&
  (request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0);

/**
 * Body deadlines: a body read whole must arrive within `bodyMs`; a streamed body must bring at
 * least `streamMinBytesPerSecond` in every `bodyMs` (a window in which the server itself holds
 * unread bytes does not count against the client). A client that falls behind gets the 408
 * error body, and the connection is closed: the rest of its body is never read.
 */
export function registerBodyDeadlines(app: FastifyInstance, deadlines: RequestDeadlines): void {
  app.addHook('preParsing', (request, reply, payload, done) => {
    if (!readsBody(request)) return done(null, payload);
    const guarded = new PassThrough();
    let timer: NodeJS.Timeout;
    const stop = () => clearTimeout(timer);
    const fail = (message: string) => {
      stop();
      closeAfterReply(reply);
      payload.unpipe(guarded);
      guarded.destroy(new AppError('request_timeout', message));
    };
    if (request.routeOptions.config.streamedBody) {
      const minimum = Math.ceil((deadlines.streamMinBytesPerSecond * deadlines.bodyMs) / 1000);
      let received = 0;
      payload.on('data', (chunk: Buffer) => (received += chunk.length));
      const check = () => {
        const behind = received < minimum && guarded.readableLength === 0;
        if (behind) return fail(`the body arrived slower than ${deadlines.streamMinBytesPerSecond} bytes a second`);
        received = 0;
        timer = setTimeout(check, deadlines.bodyMs).unref();
      };
      timer = setTimeout(check, deadlines.bodyMs).unref();
      streams.set(request, guarded);
    } else {
      timer = setTimeout(() => fail(`the body did not arrive within ${deadlines.bodyMs} ms`), deadlines.bodyMs).unref();
    }
    guarded.once('end', stop).once('close', stop);
    request.raw.once('close', stop);
    // Answered without reading its body (refused before the handler read it): the rest is read
    // and dropped, as Node does with a body nobody reads, so a next request on the connection is.
    reply.raw.once('finish', () => {
      if (guarded.readableEnded) return;
      stop();
      payload.unpipe(guarded);
      payload.resume();
    });
    payload.pipe(guarded);
    done(null, guarded);
  });
}

/** The answer is the last on its connection: the client's unread bytes are not a next request. */
function closeAfterReply(reply: FastifyReply): void {
  reply.raw.shouldKeepAlive = false;
}
