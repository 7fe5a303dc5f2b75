import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createNetServer, type AddressInfo, type Server as NetServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { simpleParser, type ParsedMail } from 'mailparser';
import { generate } from 'selfsigned';
import { SMTPServer, type SMTPServerOptions, type SMTPServerSession } from 'smtp-server';
import { scaled } from './wait.ts';

/** A self-signed certificate and its PEM in a temp file (DRAGNET_SMTP_CA_FILE). */
export interface TestCertificate {
  key: string;
  cert: string;
  /** A file holding `cert`, to hand to the app as DRAGNET_SMTP_CA_FILE. */
  caFile: string;
  remove(): void;
}

let certificate: Promise<TestCertificate> | undefined;

/** One certificate per test process (RSA generation takes a moment). */
export function testCertificate(): Promise<TestCertificate> {
  certificate ??= selfSignedCertificate('127.0.0.1', [
    { type: 7, ip: '127.0.0.1' },
    { type: 2, value: 'localhost' },
  ]);
  return certificate;
}

/** A self-signed server certificate (its own CA) for the given subject alternative names. */
export async function selfSignedCertificate(
  commonName: string,
  altNames: ({ type: 7; ip: string } | { type: 2; value: string })[],
): Promise<TestCertificate> {
  const pems = await generate([{ name: 'commonName', value: commonName }], {
    keySize: 2048,
    algorithm: 'sha256',
    notBeforeDate: new Date(Date.now() - 24 * 3600_000),
    notAfterDate: new Date(Date.now() + 30 * 24 * 3600_000),
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, keyCertSign: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames },
    ],
  });
  const dir = mkdtempSync(path.join(tmpdir(), 'dragnet-smtp-ca-'));
  const caFile = path.join(dir, 'ca.pem');
  writeFileSync(caFile, pems.cert);
  return { key: pems.private, cert: pems.cert, caFile, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface AuthRecord {
  method: string;
  username: string | undefined;
  password: string | undefined;
  /** Whether the connection was TLS (after STARTTLS) when AUTH ran. */
  secure: boolean;
  accepted: boolean;
}

export interface ReceivedMessage {
  raw: Buffer;
  parsed: ParsedMail;
  from: string | undefined;
  to: string[];
  /** session.secure when MAIL FROM was issued. */
  secureAtMailFrom: boolean;
  /** The user that authenticated on this session, if any. */
  user: string | undefined;
}

export interface SmtpTestServerOptions {
  /**
   * offered (default): advertised in EHLO and supported. hidden: smtp-server's hideSTARTTLS, not
   * advertised but the command still works. unsupported: the command is disabled altogether.
   */
  starttls?: 'offered' | 'hidden' | 'unsupported';
  /** Credentials onAuth accepts; null: the server does not offer AUTH at all. */
  auth?: { user: string; pass: string } | null;
  /** Let AUTH run on a plaintext connection (needed by SSL senders, which never upgrade). */
  allowInsecureAuth?: boolean;
  /** Hold every MAIL FROM until `release()` is called. */
  gated?: boolean;
  /** The STARTTLS certificate; default: testCertificate(). */
  certificate?: { key: string; cert: string };
}

export interface SmtpTestServer {
  port: number;
  messages: ReceivedMessage[];
  auths: AuthRecord[];
  /** session.secure of each connection at MAIL FROM time, in order. */
  mailFromSecure: boolean[];
  /** Connections opened so far. */
  connections: number;
  /** Releases gated MAIL FROM commands. */
  release(): void;
  /** Resolves once `count` messages have arrived (rejects after `timeoutMs`). */
  waitForMessages(count: number, timeoutMs?: number): Promise<ReceivedMessage[]>;
  close(): Promise<void>;
}

/**
 * A real SMTP server on 127.0.0.1 with a self-signed certificate for STARTTLS, optional AUTH,
 * recording what each session did (TLS state at AUTH and MAIL FROM) and every message, raw and
 * parsed.
 */
export async function startSmtpTestServer(options: SmtpTestServerOptions = {}): Promise<SmtpTestServer> {
  const { key, cert } = options.certificate ?? (await testCertificate());
  const auth = options.auth === undefined ? { user: 'mailer', pass: 'smtp-pass' } : options.auth;
  const messages: ReceivedMessage[] = [];
  const auths: AuthRecord[] = [];
  const mailFromSecure: boolean[] = [];
  let connections = 0;
  let opened: () => void = () => {};
  let gate: Promise<void> = options.gated ? new Promise((resolve) => (opened = resolve)) : Promise.resolve();
  const waiters = new Set<() => void>();
  const notify = () => waiters.forEach((w) => w());

  const serverOptions: SMTPServerOptions = {
    key,
    cert,
    secure: false,
    hideSTARTTLS: options.starttls === 'hidden',
    allowInsecureAuth: options.allowInsecureAuth ?? false,
    authOptional: !auth,
    disabledCommands: [...(auth ? [] : ['AUTH']), ...(options.starttls === 'unsupported' ? ['STARTTLS'] : [])],
    authMethods: ['PLAIN', 'LOGIN'],
    logger: false,
    onConnect(_session, callback) {
      connections += 1;
      callback();
    },
    onAuth(authData, session: SMTPServerSession, callback) {
      const accepted = !!auth && authData.username === auth.user && authData.password === auth.pass;
      auths.push({
        method: authData.method,
        username: authData.username ?? undefined,
        password: authData.password ?? undefined,
        secure: session.secure,
        accepted,
      });
      if (!accepted) return callback(new Error('Invalid username or password'));
      callback(null, { user: authData.username });
    },
    onMailFrom(_address, session, callback) {
      mailFromSecure.push(session.secure);
      void gate.then(() => callback());
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks);
        simpleParser(raw)
          .then((parsed) => {
            messages.push({
              raw,
              parsed,
              from: session.envelope.mailFrom ? session.envelope.mailFrom.address : undefined,
              to: session.envelope.rcptTo.map((r) => r.address),
              secureAtMailFrom: session.secure,
              user: session.user as string | undefined,
            });
            notify();
            callback();
          })
          .catch((error: Error) => callback(error));
      });
    },
  };
  const server = new SMTPServer(serverOptions);
  server.on('error', () => {
    // client disconnects (e.g. a refused STARTTLS) surface here; the test looks at outcomes
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = ((server as unknown as { server: NetServer }).server.address() as AddressInfo).port;

  return {
    port,
    messages,
    auths,
    mailFromSecure,
    get connections() {
      return connections;
    },
    release() {
      opened();
      gate = Promise.resolve();
    },
    waitForMessages(count, timeoutMs = scaled(20_000)) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (messages.length >= count) {
            clearTimeout(timer);
            waiters.delete(check);
            resolve(messages);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`expected ${count} messages, got ${messages.length} within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * A TCP server on loopback that counts the connections it accepts and says nothing (an SMTP
 * server that hangs), or only `greeting` (another service's banner).
 */
export async function startSilentServer(
  greeting?: Buffer,
): Promise<{ port: number; connections: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createNetServer((socket) => {
    connections += 1;
    if (greeting) socket.write(greeting);
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    get connections() {
      return connections;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
