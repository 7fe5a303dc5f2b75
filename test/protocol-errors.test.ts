import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/test-app.ts';
import { testEngine } from './support/test-store.ts';

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Requests a client library would not send (issue #15: they reset the connection), written to
 * a real listening server byte for byte. Resolves with every response read before the server
 * closed the connection, or `reset` when it was torn down without one.
 */
function exchange(
  port: number,
  text: string,
  options: { headFirst?: boolean } = {},
): Promise<{ responses: RawResponse[]; reset: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(text));
    let received = '';
    let reset = false;
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNRESET' || error.code === 'EPIPE') reset = true;
      else reject(error);
    });
    socket.setTimeout(10_000, () =>
      reject(new Error(`no answer within 10 s; got ${JSON.stringify(received.slice(0, 200))}`)),
    );
    socket.on('close', () => {
      const responses: RawResponse[] = [];
      let rest = received;
      while (rest.startsWith('HTTP/1.1 ')) {
        const headEnd = rest.indexOf('\r\n\r\n');
        const [statusLine, ...lines] = rest.slice(0, headEnd).split('\r\n');
        const headers = Object.fromEntries(
          lines.map((line) => [
            line.slice(0, line.indexOf(':')).toLowerCase(),
            line.slice(line.indexOf(':') + 1).trim(),
          ]),
        );
        // The answer to HEAD announces a length but carries no body.
        const length = options.headFirst && responses.length === 0 ? 0 : Number(headers['content-length'] ?? 0);
        responses.push({
          status: Number(statusLine!.split(' ')[1]),
          headers,
          body: rest.slice(headEnd + 4, headEnd + 4 + length),
        });
        rest = rest.slice(headEnd + 4 + length);
      }
      resolve({ responses, reset: reset || (responses.length === 0 && received.length === 0) });
    });
  });
}

/** The project's error body (docs/api.md "Errors"), with its request id in X-Request-Id. */
function expectErrorBody(response: RawResponse | undefined, status: number, code: string) {
  expect(response, 'a response').toBeDefined();
  expect(response!.status, response!.body).toBe(status);
  expect(response!.headers['content-type']).toMatch(/^application\/json/);
  const body = JSON.parse(response!.body) as { code: string; message: string; request_id: string };
  expect(body).toMatchObject({ code, message: expect.any(String), request_id: expect.any(String) });
  expect(response!.headers['x-request-id']).toBe(body.request_id);
  return body;
}

describe(`requests that never reach a route, on a listening server (${testEngine})`, () => {
  let t: TestApp;
  let port: number;
  let auth: string;

  beforeAll(async () => {
    t = await createTestApp({ env: { DRAGNET_RATE_LIMITS: 'off' } });
    await t.createUser({ org: 'Protocol', email: 'p@protocol.test' });
    auth = `Authorization: Bearer ${(await t.login('p@protocol.test')).access}\r\n`;
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    port = (t.app.server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await t?.close();
  });

  const followUp = 'GET /healthz HTTP/1.1\r\nHost: dragnet.test\r\nConnection: close\r\n\r\n';
  const withBody = (method: string, path: string, body: string) =>
    `${method} ${path} HTTP/1.1\r\nHost: dragnet.test\r\n${auth}Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

  it('CONNECT to a known path is a 405 naming its methods, to anything else a 404, never a reset', async () => {
    const known = await exchange(port, 'CONNECT /token/ HTTP/1.1\r\nHost: dragnet.test\r\n\r\n');
    expect(known.reset).toBe(false);
    expect(expectErrorBody(known.responses[0], 405, 'method_not_allowed').message).toContain('allowed: POST');
    expect(known.responses[0]!.headers.allow).toBe('POST');

    const tunnel = await exchange(port, 'CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n');
    expect(tunnel.reset).toBe(false);
    expectErrorBody(tunnel.responses[0], 404, 'not_found');
  });

  it('TRACE with a body is a 405 and the connection goes on to the next request', async () => {
    const { responses, reset } = await exchange(port, withBody('TRACE', '/token/', '{"email":"a@b.c"}') + followUp);
    expect(reset).toBe(false);
    expectErrorBody(responses[0], 405, 'method_not_allowed');
    expect(responses[1]?.status).toBe(200);
  });

  it.each(['GET', 'HEAD', 'OPTIONS'])(
    '%s with a JSON body is answered, and so is the next request on the connection',
    async (method) => {
      const { responses, reset } = await exchange(
        port,
        withBody(method, '/service/account/', '{"a":[1,2,{"b":null}]}') + followUp,
        { headFirst: method === 'HEAD' },
      );
      expect(reset).toBe(false);
      expect(responses.map((r) => r.status)).toEqual([method === 'OPTIONS' ? 405 : 200, 200]);
    },
  );

  it('a body nested far too deep on a GET is judged like any other body or ignored, never a reset', async () => {
    const { responses, reset } = await exchange(
      port,
      withBody('GET', '/service/account/', '['.repeat(100_000) + ']'.repeat(100_000)) + followUp,
    );
    expect(reset).toBe(false);
    expect(responses.map((r) => r.status).every((status) => status < 500)).toBe(true);
    expect(responses.at(-1)?.status).toBe(200);
  });

  it('a method the HTTP parser does not know is a 400 with the error body', async () => {
    const { responses, reset } = await exchange(port, 'BREW /token/ HTTP/1.1\r\nHost: dragnet.test\r\n\r\n');
    expect(reset).toBe(false);
    expectErrorBody(responses[0], 400, 'bad_request');
  });

  it('a malformed header line, and headers over the size limit, get the error body too', async () => {
    expectErrorBody(
      (await exchange(port, 'GET /healthz HTTP/1.1\r\nHost: dragnet.test\r\nno colon here\r\n\r\n')).responses[0],
      400,
      'bad_request',
    );
    const huge = `GET /healthz HTTP/1.1\r\nHost: dragnet.test\r\nX-Padding: ${'a'.repeat(20_000)}\r\n\r\n`;
    expectErrorBody((await exchange(port, huge)).responses[0], 431, 'headers_too_large');
  });

  it('a path segment over the router limit, or not valid percent-encoding, is a 400 with the error body', async () => {
    const long = await exchange(
      port,
      `GET /service/alert_system_match_get_match/${'1'.repeat(200)}/ HTTP/1.1\r\nHost: dragnet.test\r\n${auth}Connection: close\r\n\r\n`,
    );
    expect(expectErrorBody(long.responses[0], 400, 'bad_request').message).toContain('path segment');
    const malformed = await exchange(
      port,
      `GET /service/alert_system_match_get_match/%E0%A4%A/ HTTP/1.1\r\nHost: dragnet.test\r\n${auth}Connection: close\r\n\r\n`,
    );
    expectErrorBody(malformed.responses[0], 400, 'bad_request');
  });
});
