import { randomUUID } from 'node:crypto';
import { ServerResponse, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import { AppError } from '../lib/errors.ts';
import { sendError } from './error-handler.ts';

/**
 * Requests that never reach a route still get the error body (docs/api.md "Errors"): a URL the
 * router cannot decode or with a path segment over its length limit, bytes the HTTP parser
 * refuses (an unknown method, a malformed header), and CONNECT.
 */
export const protocolErrorOptions: Pick<FastifyServerOptions, 'frameworkErrors' | 'clientErrorHandler'> = {
  // Fastify's own answers to these are JSON in another shape ({error, statusCode}).
  frameworkErrors: (error, request, reply) => {
    const message = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'a path segment is too long' : 'the URL is not valid';
    // The onRequest hook that sets it runs only for requests that found their route.
    void reply.header('x-request-id', request.id);
    sendError(request, reply, new AppError('bad_request', message));
  },
  clientErrorHandler: (error, socket) => {
    // A reset connection has nobody left to answer.
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const [status, reason, code, message] =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'Request Header Fields Too Large', 'headers_too_large', 'the request headers are too large']
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? [408, 'Request Timeout', 'request_timeout', 'the request took too long to arrive']
          : [400, 'Bad Request', 'bad_request', 'the request is not valid HTTP/1.1 (method, request line or headers)'];
    const requestId = randomUUID();
    const body = JSON.stringify({ code, message, request_id: requestId });
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
  },
};

/**
 * Node hands CONNECT to a 'connect' listener instead of the request handler, and destroys the
 * socket when there is none: the client saw a reset. Here it goes through the router like any
 * other method, so it gets the same 405 (a known path) or 404, and the connection then closes.
 */
export function answerConnect(app: FastifyInstance): void {
  app.server.on('connect', (request: IncomingMessage, socket: Duplex) => {
    const response = new ServerResponse(request);
    response.shouldKeepAlive = false;
    response.assignSocket(socket as never);
    response.once('finish', () => {
      response.detachSocket(socket as never);
      socket.end();
    });
    app.routing(request, response);
  });
}
