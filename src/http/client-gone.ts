import type { FastifyReply } from 'fastify';

/**
 * Calls `leave` if the client closes its connection before the whole response was sent: it
 * went away mid-request or mid-download. (Fastify's onRequestAbort only fires while the request
 * body is still arriving, not while the handler runs.)
 */
export function onClientGone(reply: FastifyReply, leave: () => void): void {
  // `on`, not `once`: 'close' comes once per response, and once's wrapper costs every request.
  reply.raw.on('close', () => {
    // Ended: the whole answer was handed to the connection (injected requests never flush).
    if (!reply.raw.writableEnded) leave();
  });
}

/** A signal that aborts when the client goes away before its response is complete. */
export function clientSignal(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  onClientGone(reply, () => controller.abort());
  return controller.signal;
}
