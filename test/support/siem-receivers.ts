import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';

/** A certificate the receivers present (test/support/smtp-test-server.ts testCertificate()). */
export interface ServerCertificate {
  key: string;
  cert: string;
}

/** One request an HEC receiver took: its token, and the events its body held. */
export interface HecRequest {
  authorization: string | undefined;
  contentType: string | undefined;
  events: Record<string, unknown>[];
}

/** What the receiver answers: HEC's success, or a status and body of the test's choosing. */
export type HecAnswer = 'success' | { status: number; body: string };

export interface HecReceiver {
  /** https://127.0.0.1:<port>/services/collector/event */
  url: string;
  port: number;
  requests: HecRequest[];
  /** Every event of every request with the right token, in order. */
  events(): Record<string, unknown>[];
  answer(next: HecAnswer): void;
  close(): Promise<void>;
}

/** HEC's body: JSON objects one after another (whitespace between them allowed). */
function parseConcatenated(text: string): Record<string, unknown>[] {
  const events: Record<string, unknown>[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{') {
      if (depth++ === 0) start = i;
    } else if (c === '}' && --depth === 0) {
      events.push(JSON.parse(text.slice(start, i + 1)) as Record<string, unknown>);
    }
  }
  return events;
}

/**
 * An HTTP Event Collector look-alike over HTTPS on loopback: checks `Authorization: Splunk
 * <token>` as HEC does (401 `{"text":"Invalid token","code":4}`), answers
 * `{"text":"Success","code":0}` and records the events.
 */
export async function startHecReceiver(certificate: ServerCertificate, token: string): Promise<HecReceiver> {
  const requests: HecRequest[] = [];
  const sockets = new Set<Socket>();
  let answer: HecAnswer = 'success';
  const server = createHttpsServer({ key: certificate.key, cert: certificate.cert }, (request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const authorization = request.headers.authorization;
      const reply = (status: number, body: string) => {
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(body);
      };
      if (request.url !== '/services/collector/event')
        return reply(404, '{"text":"The requested URL was not found on this server.","code":404}');
      if (authorization !== `Splunk ${token}`) return reply(401, '{"text":"Invalid token","code":4}');
      const events = parseConcatenated(Buffer.concat(chunks).toString('utf8'));
      requests.push({ authorization, contentType: request.headers['content-type'], events });
      if (answer === 'success') return reply(200, '{"text":"Success","code":0}');
      reply(answer.status, answer.body);
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `https://127.0.0.1:${port}/services/collector/event`,
    port,
    requests,
    events: () => requests.flatMap((r) => r.events),
    answer(next) {
      answer = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** An RFC 5424 message as the listener read it. */
export interface SyslogMessage {
  pri: number;
  version: string;
  timestamp: string;
  hostname: string;
  appName: string;
  procId: string;
  msgId: string;
  structuredData: string;
  msg: string;
}

export interface SyslogListener {
  port: number;
  messages: SyslogMessage[];
  /** Frames that did not parse as RFC 5424 (none expected). */
  malformed: string[];
  close(): Promise<void>;
}

const RFC5424 = /^<(\d{1,3})>(\d) (\S+) (\S+) (\S+) (\S+) (\S+) (-|\[.*?\]) ([\s\S]*)$/;

/** Splits RFC 5425 octet-counted frames (`LEN SP MSG`) off `buffer`; returns the rest. */
function takeFrames(buffer: Buffer, onFrame: (frame: string) => void): Buffer {
  let rest: Buffer = buffer;
  for (;;) {
    const space = rest.indexOf(0x20);
    if (space < 0) return rest;
    const length = Number(rest.subarray(0, space).toString('ascii'));
    if (!Number.isInteger(length) || length <= 0)
      throw new Error(`not an octet count: ${rest.subarray(0, space).toString()}`);
    if (rest.length < space + 1 + length) return rest;
    onFrame(rest.subarray(space + 1, space + 1 + length).toString('utf8'));
    rest = rest.subarray(space + 1 + length);
  }
}

/** A syslog-over-TLS listener (RFC 5425) on loopback that parses every octet-counted frame. */
export async function startSyslogListener(certificate: ServerCertificate): Promise<SyslogListener> {
  const messages: SyslogMessage[] = [];
  const malformed: string[] = [];
  const sockets = new Set<Socket>();
  const server = createTlsServer({ key: certificate.key, cert: certificate.cert }, (socket) => {
    let buffer: Buffer = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buffer = takeFrames(Buffer.concat([buffer, chunk]), (frame) => {
        const m = RFC5424.exec(frame);
        if (!m) return malformed.push(frame);
        messages.push({
          pri: Number(m[1]),
          version: m[2]!,
          timestamp: m[3]!,
          hostname: m[4]!,
          appName: m[5]!,
          procId: m[6]!,
          msgId: m[7]!,
          structuredData: m[8]!,
          msg: m[9]!,
        });
      });
    });
    socket.on('error', () => undefined);
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    messages,
    malformed,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * Reads a CEF line as an ArcSight parser does: seven `|`-separated header fields (`\|` and `\\`
 * escaped), then `key=value` pairs whose values unescape `\=`, `\\`, `\n` and `\r`.
 */
export function parseCef(line: string): { header: string[]; extension: Record<string, string> } {
  const header: string[] = [];
  let field = '';
  let i = 0;
  for (; i < line.length && header.length < 7; i++) {
    const c = line[i];
    if (c === '\\' && (line[i + 1] === '|' || line[i + 1] === '\\')) field += line[++i];
    else if (c === '|') {
      header.push(field);
      field = '';
    } else field += c;
  }
  const rest = line.slice(i);
  const extension: Record<string, string> = {};
  // A key starts after a space and runs to an unescaped '='; its value runs to the next key.
  // An escaped '=' follows a backslash, never a key character, so it cannot start a key.
  const keys = [...rest.matchAll(/(?:^| )([A-Za-z0-9_]+)=/g)];
  keys.forEach((m, n) => {
    const start = m.index! + m[0].length;
    const end = n + 1 < keys.length ? keys[n + 1]!.index! : rest.length;
    extension[m[1]!] = rest
      .slice(start, end)
      .replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c === 'r' ? '\r' : c));
  });
  return { header, extension };
}
