import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/test-app.ts';

/**
 * Slow clients (docs/api.md "Slow requests"), over real sockets: headers and bodies that trickle
 * are answered 408 with the error body and the connection is closed, while an upload that keeps
 * up its rate may take longer than the body deadline.
 */

const DEADLINE_MS = 400;
const MIN_BYTES_PER_SECOND = 2000;

interface RawExchange {
  socket: Socket;
  /** Resolves with everything the server sent once it closed the connection. */
  closed: Promise<string>;
}

function open(port: number): RawExchange {
  const socket = connect({ host: '127.0.0.1', port });
  socket.setNoDelay(true);
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
  // Writes after the server closed fail with EPIPE: the client under test does not care.
  socket.on('error', () => undefined);
  const closed = new Promise<string>((resolve) => socket.once('close', () => resolve(received)));
  return { socket, closed };
}

/** Writes `text` a few bytes at a time, every `everyMs`, until the socket closes or it is all sent. */
async function trickle(exchange: RawExchange, text: string, everyMs: number, bytes = 1): Promise<void> {
  for (let at = 0; at < text.length && !exchange.socket.destroyed; at += bytes) {
    exchange.socket.write(text.slice(at, at + bytes));
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

function parseResponse(raw: string) {
  const [head, body] = raw.split('\r\n\r\n', 2) as [string, string];
  const status = Number(head.split(' ')[1]);
  return {
    status,
    head: head.toLowerCase(),
    json: JSON.parse(body) as { code: string; message: string; request_id: string },
  };
}

describe('request deadlines over real sockets', () => {
  let t: TestApp;
  let port: number;
  let system: string;

  beforeAll(async () => {
    t = await createTestApp({
      env: {
        DRAGNET_REQUEST_HEADERS_TIMEOUT_MS: String(DEADLINE_MS),
        DRAGNET_REQUEST_BODY_TIMEOUT_MS: String(DEADLINE_MS),
        DRAGNET_INGEST_MIN_BYTES_PER_SECOND: String(MIN_BYTES_PER_SECOND),
      },
    });
    await t.createUser({ org: 'Operators', email: 'ops@deadline.test', role: 'system' });
    system = (await t.login('ops@deadline.test')).access;
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    port = (t.app.server.address() as { port: number }).port;
  });
  afterAll(() => t.close());

  it('answers a trickled JSON body 408 with the error body within the body deadline, and closes the connection', async () => {
    const body = JSON.stringify({ email: 'ops@deadline.test', password: 'x'.repeat(200) });
    const exchange = open(port);
    const started = Date.now();
    exchange.socket.write(
      `POST /token/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    // A byte every 20 ms: 50 bytes a second, far from the body's whole length in time.
    void trickle(exchange, body, 20);
    const response = parseResponse(await exchange.closed);
    const elapsed = Date.now() - started;
    expect(response.status).toBe(408);
    expect(response.json).toMatchObject({ code: 'request_timeout', request_id: expect.any(String) });
    expect(response.head).toContain('connection: close');
    expect(elapsed).toBeGreaterThanOrEqual(DEADLINE_MS - 50);
    expect(elapsed).toBeLessThan(DEADLINE_MS + 1500);
  });

  it('answers trickled headers 408 with the error body', async () => {
    const exchange = open(port);
    const started = Date.now();
    void trickle(exchange, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ${'y'.repeat(500)}\r\n\r\n`, 20);
    const response = parseResponse(await exchange.closed);
    expect(response.status).toBe(408);
    expect(response.json.code).toBe('request_timeout');
    // Node looks for late headers every quarter deadline.
    expect(Date.now() - started).toBeLessThan(DEADLINE_MS * 2 + 1500);
  });

  const ingestHead = (length: number) =>
    `POST /ingest/messenger/?format=jsonl HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${system}\r\n` +
    `Content-Type: application/x-ndjson\r\nContent-Length: ${length}\r\nConnection: close\r\n\r\n`;

  const ndjsonLine = (id: number) =>
    JSON.stringify({
      channel: { platform: 'telegram', username: 'deadlines', title: 'Deadlines' },
      message_id: id,
      date: '2026-01-01T00:00:00Z',
      text: `upload line ${id} ${'z'.repeat(200)}`,
    }) + '\n';

  it('cuts an ingest stream that trickles a few bytes a second', async () => {
    const body = Array.from({ length: 50 }, (_, i) => ndjsonLine(i + 1)).join('');
    const exchange = open(port);
    const started = Date.now();
    exchange.socket.write(ingestHead(body.length));
    void trickle(exchange, body, 20, 5);
    const response = parseResponse(await exchange.closed);
    expect(response.status).toBe(408);
    expect(response.json.code).toBe('request_timeout');
    expect(Date.now() - started).toBeLessThan(DEADLINE_MS + 1500);
  });

  it('lets an ingest stream that keeps its rate take longer than the body deadline', async () => {
    const lines = Array.from({ length: 400 }, (_, i) => ndjsonLine(i + 1000));
    const body = lines.join('');
    const exchange = open(port);
    const started = Date.now();
    exchange.socket.write(ingestHead(Buffer.byteLength(body)));
    // About 90 KB in chunks every 50 ms for about 2.5 deadlines: far above the minimum rate.
    const chunk = Math.ceil(body.length / Math.ceil((DEADLINE_MS * 2.5) / 50));
    await trickle(exchange, body, 50, chunk);
    const response = await exchange.closed;
    expect(Date.now() - started).toBeGreaterThan(DEADLINE_MS * 2);
    const status = Number(response.split(' ')[1]);
    expect(status, response).toBe(200);
    expect(JSON.parse(response.split('\r\n\r\n')[1]!)).toMatchObject({ accepted: 400, bytes: Buffer.byteLength(body) });
  });
});
