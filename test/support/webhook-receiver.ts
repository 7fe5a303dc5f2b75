import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  /** The exact bytes received. */
  body: Buffer;
}

/**
 * What the receiver does with a request: answer a status (and optional headers), `delayMs`
 * after the request arrived, or never answer.
 */
export type ReceiverBehaviour =
  { status: number; headers?: Record<string, string>; body?: string; delayMs?: number } | 'hang';

export interface WebhookReceiver {
  /** http://127.0.0.1:<port><path> */
  url(pathname?: string): string;
  port: number;
  requests: ReceivedRequest[];
  /** Connections a client holds open now (one it gave up on is closed). */
  openConnections(): number;
  /** Changes what later requests get. */
  respond(behaviour: ReceiverBehaviour): void;
  close(): Promise<void>;
}

/** A plain HTTP server on loopback that records every request with its raw body. */
export async function startWebhookReceiver(
  host = '127.0.0.1',
  initial: ReceiverBehaviour = { status: 204 },
): Promise<WebhookReceiver> {
  const requests: ReceivedRequest[] = [];
  const sockets = new Set<Socket>();
  const hanging = new Set<ServerResponse>();
  let behaviour = initial;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      requests.push({
        method: request.method!,
        url: request.url!,
        headers: request.headers,
        body: Buffer.concat(chunks),
      });
      const now = behaviour;
      if (now === 'hang') {
        hanging.add(response);
        return;
      }
      const answer = () => {
        response.writeHead(now.status, now.headers);
        response.end(now.body ?? '');
      };
      if (now.delayMs) setTimeout(answer, now.delayMs);
      else answer();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const hostPart = host.includes(':') ? `[${host}]` : host;
  return {
    port,
    url: (pathname = '/hook') => `http://${hostPart}:${port}${pathname}`,
    requests,
    openConnections: () => sockets.size,
    respond(next) {
      behaviour = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * Verifies `X-AlertSystem-Signature` exactly as spec 6.2 tells a receiver to: strip `sha256=`,
 * recompute HMAC-SHA256 over the exact received bytes keyed with the secret string, compare in
 * constant time.
 */
export function verifyAlertSystemSignature(
  secret: string,
  body: Buffer,
  header: string | string[] | undefined,
): boolean {
  if (typeof header !== 'string' || !header.startsWith('sha256=')) return false;
  const received = Buffer.from(header.slice('sha256='.length), 'hex');
  const expected = createHmac('sha256', secret).update(body).digest();
  return received.length === expected.length && timingSafeEqual(received, expected);
}

/**
 * Verifies a Standard Webhooks signature: HMAC-SHA256 keyed with the base64-decoded part of the
 * secret after `whsec_`, over `${webhook-id}.${webhook-timestamp}.${body}`; the header holds one
 * or more space-separated `v1,<base64>` entries.
 */
export function verifyStandardWebhook(secret: string, request: ReceivedRequest): boolean {
  const id = request.headers['webhook-id'];
  const timestamp = request.headers['webhook-timestamp'];
  const signatures = request.headers['webhook-signature'];
  if (typeof id !== 'string' || typeof timestamp !== 'string' || typeof signatures !== 'string') return false;
  if (!secret.startsWith('whsec_')) return false;
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(request.body).digest();
  return signatures.split(' ').some((entry) => {
    const [version, value] = entry.split(',');
    if (version !== 'v1' || !value) return false;
    const received = Buffer.from(value, 'base64');
    return received.length === expected.length && timingSafeEqual(received, expected);
  });
}
